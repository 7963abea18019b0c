// A small workspace for the rule builder's and the classifier's tests: app depends on lib, with
// outputs, warm paths, scratch, ignoreReads and a json input declared; its tasks planned and keyed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "test_support.hpp"

namespace qk::test {

struct RulesWorkspace {
    TempDir dir{"qk-rules"};
    std::unique_ptr<key::Session> session;

    explicit RulesWorkspace(const std::string& warm = R"("{projectRoot}/.warm")")
    {
        dir.write("nx.json", R"({
  "namedInputs": { "default": ["{projectRoot}/**/*"], "production": ["default", "!{projectRoot}/**/*.spec.ts"] },
  "targetDefaults": { "build": { "dependsOn": ["^build"], "inputs": ["production"], "outputs": ["{projectRoot}/dist"] } }
})");
        dir.write("pnpm-workspace.yaml", "packages:\n  - packages/*\n");
        dir.write("package.json", R"({ "name": "root", "private": true })");
        dir.write(".gitignore", "dist\n");
        dir.write("packages/app/package.json", R"({ "name": "app", "dependencies": { "lib": "workspace:*" } })");
        dir.write("packages/app/project.json", R"({ "name": "app", "targets": {
  "build": { "command": "true", "qk:warm": [)" + warm + R"(],
             "qk:sandbox": { "scratch": ["{projectRoot}/.tool-cache"] },
             "qk:ultracache": { "ignoreReads": ["{workspaceRoot}/docs/**", "^README.md"] } },
  "lint": { "command": "true", "inputs": [{ "json": "{workspaceRoot}/tsconfig.base.json", "fields": ["compilerOptions"] }] }
} })");
        dir.write("packages/app/src/index.ts", "export {}\n");
        dir.write("packages/app/src/index.spec.ts", "test\n");
        dir.write("packages/lib/package.json", R"({ "name": "lib" })");
        dir.write("packages/lib/project.json",
                  R"({ "name": "lib", "targets": { "build": { "command": "true", "outputs": ["{projectRoot}/out/**/*.js"] } } })");
        dir.write("packages/lib/src/lib.ts", "export {}\n");
        dir.write("packages/lib/README.md", "lib\n");
        dir.write("packages/other/package.json", R"({ "name": "other" })");
        dir.write("other/notes.txt", "notes\n");
        dir.write("docs/x.md", "docs\n");
        dir.write("tsconfig.base.json", "{}\n");
        dir.write(".env", "A=1\n");
        dir.write(".nvmrc", "20\n");
        auto s = key::Session::open(dir.path);
        REQUIRE(s);
        session = std::move(s).value();
        workspace::TaskRequest request;
        request.targets = {"build", "lint"};
        request.projects = {"app"};
        REQUIRE(session->plan(request));
        for (std::size_t i = 0; i < session->tasks().tasks().size(); ++i)
            REQUIRE(session->keys().key(i));
    }

    Result<rules::Rules> rules_of(const std::string& id, const std::vector<std::string>& scratch = {})
    {
        auto i = session->tasks().index(id);
        REQUIRE(i);
        return sandbox::task_rules(*session, *i, scratch);
    }
    std::string abs(const std::string& rel) const { return (dir.path / rel).string(); }
};


}  // namespace qk::test
