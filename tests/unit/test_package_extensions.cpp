// pnpm's packageExtensions written by qk report fix into pnpm-workspace.yaml and package.json, and the
// import scan that finds which installed package needs one.
#include <catch2/catch.hpp>

#include "qk/audit/hoisted_importers.hpp"
#include "qk/workspace/package_extensions.hpp"

using qk::workspace::add_package_extension_json;
using qk::workspace::add_package_extension_yaml;
using qk::workspace::PackageExtension;

namespace {
const PackageExtension kEvents{"minipass@3.3.6", "events", "3.3.0"};
}

TEST_CASE("packageExtensions is added at the end of a pnpm-workspace.yaml that has none", "[report][fix]")
{
    auto out = add_package_extension_yaml("packages:\n  - 'packages/*'\n# the end\n", kEvents);
    REQUIRE(out);
    CHECK(*out == "packages:\n  - 'packages/*'\n# the end\n\npackageExtensions:\n  'minipass@3.3.6':\n"
                  "    dependencies:\n      'events': '3.3.0'\n");
}

TEST_CASE("a new entry goes after the existing ones, in their indentation, before the next key's comments",
          "[report][fix]")
{
    const std::string text = "packages:\n  - a\n\npackageExtensions:\n    '@vue/composition-api':\n"
                             "        peerDependencies:\n            vue: '>= 2.5'\n\n# builds\nallowBuilds:\n"
                             "    nx: true\n";
    auto out = add_package_extension_yaml(text, kEvents);
    REQUIRE(out);
    CHECK(*out == "packages:\n  - a\n\npackageExtensions:\n    '@vue/composition-api':\n        peerDependencies:\n"
                  "            vue: '>= 2.5'\n    'minipass@3.3.6':\n        dependencies:\n"
                  "            'events': '3.3.0'\n\n# builds\nallowBuilds:\n    nx: true\n");
}

TEST_CASE("an entry for the importer gains dependencies, or a member in them", "[report][fix]")
{
    const std::string peers = "packageExtensions:\n  minipass@3.3.6:\n    peerDependencies:\n      x: '1'\n";
    auto out = add_package_extension_yaml(peers, kEvents);
    REQUIRE(out);
    CHECK(*out == peers + "    dependencies:\n      'events': '3.3.0'\n");
    const std::string deps = "packageExtensions:\n  minipass@3.3.6:\n    dependencies:\n      x: '1'\nother: 1\n";
    out = add_package_extension_yaml(deps, kEvents);
    REQUIRE(out);
    CHECK(*out == "packageExtensions:\n  minipass@3.3.6:\n    dependencies:\n      x: '1'\n      'events': '3.3.0'\n"
                  "other: 1\n");
    // Written once: the same edit again changes nothing.
    CHECK(add_package_extension_yaml(*out, kEvents).value() == *out);
}

TEST_CASE("a flow-style map or a malformed file is left to do by hand, saying where", "[report][fix]")
{
    auto flow = add_package_extension_yaml("packageExtensions: {a: {dependencies: {b: '1'}}}\n", kEvents);
    REQUIRE_FALSE(flow);
    CHECK_THAT(flow.error().message, Catch::Contains("pnpm-workspace.yaml:1:") &&
                                         Catch::Contains("packageExtensions is not a block map"));
    auto bad = add_package_extension_yaml("packages: [\n", kEvents);
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("malformed YAML"));
}

TEST_CASE("pnpm 9's package.json gains pnpm.packageExtensions, last among its members", "[report][fix]")
{
    auto out = add_package_extension_json("{\n  \"name\": \"root\",\n  \"private\": true\n}\n", kEvents);
    REQUIRE(out);
    CHECK(out->find("\"private\": true,\n  \"pnpm\"") != std::string::npos);
    CHECK(out->find("\"minipass@3.3.6\"") != std::string::npos);
    CHECK(out->find("\"events\": \"3.3.0\"") != std::string::npos);
    auto again = add_package_extension_json(*out, kEvents);
    REQUIRE(again);
    CHECK(*again == *out);
}

TEST_CASE("an import of a package is told from a mention of it", "[audit][hoisted]")
{
    using qk::audit::imports_package;
    CHECK(imports_package("const E = require(\"events\");", "events"));
    CHECK(imports_package("import { EventEmitter } from 'events';", "events"));
    CHECK(imports_package("export * from \"events/x.js\"", "events"));
    CHECK(imports_package("await import( 'events' )", "events"));
    CHECK(imports_package("import 'events'", "events"));
    CHECK(imports_package("/// <reference types=\"events\" />", "events"));
    CHECK(imports_package("var a=require(\"@scope/pkg\")", "@scope/pkg"));
    CHECK_FALSE(imports_package("emit('events')", "events"));
    CHECK_FALSE(imports_package("require('events-x')", "events"));
    CHECK_FALSE(imports_package("require('./events')", "events"));
    CHECK_FALSE(imports_package("const reimport = 'events'", "events"));
    CHECK_FALSE(imports_package("/// <reference path=\"events\" />", "events"));
}
