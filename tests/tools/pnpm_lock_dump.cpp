// pnpm_lock_dump: prints what qk reads from a pnpm lockfile as JSON, for tests/e2e/test_pnpm_install.py
// to compare with what `pnpm list --json -r` reports of a real install. Test-only.
//
//   pnpm_lock_dump <pnpm-lock.yaml> [--modules <node_modules/.modules.yaml>]
//
// With --modules, each snapshot also gets its node_modules/.pnpm directory for that install's layout.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "qk/util/json_writer.hpp"
#include "qk/workspace/pnpm_lock.hpp"
#include "qk/workspace/pnpm_modules.hpp"
#include "qk/workspace/pnpm_store_index.hpp"
#include "qk/workspace/pnpm_closure.hpp"

using namespace qk::workspace;
using qk::JsonWriter;

namespace {

void deps(JsonWriter& w, const PnpmLock& lock, const char* name, const PnpmImporterDeps& d)
{
    w.key(name).begin_object();
    for (const auto& [alias, dep] : d) {
        w.key(alias).begin_object();
        w.key("specifier").value(dep.specifier);
        w.key("version").value(dep.version);
        w.key("snapshot");
        dep.snapshot ? (void)w.value(lock.snapshots[*dep.snapshot].key) : (void)w.null();
        w.key("link");
        dep.link ? (void)w.value(*dep.link) : (void)w.null();
        w.end_object();
    }
    w.end_object();
}

void keys(JsonWriter& w, const PnpmLock& lock, const std::vector<std::uint32_t>& indices)
{
    w.begin_array();
    for (std::uint32_t i : indices)
        w.value(lock.snapshots[i].key);
    w.end_array();
}

int fail(const std::string& message)
{
    std::fprintf(stderr, "pnpm_lock_dump: %s\n", message.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || (args.size() != 1 && !(args.size() == 3 && args[1] == "--modules")))
        return fail("usage: pnpm_lock_dump <pnpm-lock.yaml> [--modules <node_modules/.modules.yaml>]");
    auto lock = parse_pnpm_lock(args[0]);
    if (!lock)
        return fail(lock.error().message);
    std::optional<PnpmModules> modules;
    std::optional<PnpmStoreIndex> index;
    if (args.size() == 3) {
        auto m = parse_pnpm_modules_yaml(args[2]);
        if (!m)
            return fail(m.error().message);
        modules = *m;
        index.emplace(*lock, modules->layout);
    }

    JsonWriter w(1);
    w.begin_object();
    w.key("lockfileVersion").value(lock->lockfile_version);
    if (modules) {
        w.key("layout").begin_object();
        w.key("pnpmMajor").value(modules->layout.pnpm_major);
        w.key("maxLength").value(static_cast<std::int64_t>(modules->layout.max_length));
        w.key("nodeLinker").value(modules->node_linker);
        w.end_object();
    }
    w.key("importers").begin_object();
    for (const auto& [path, imp] : lock->importers) {
        w.key(path).begin_object();
        deps(w, *lock, "dependencies", imp.dependencies);
        deps(w, *lock, "devDependencies", imp.dev_dependencies);
        deps(w, *lock, "optionalDependencies", imp.optional_dependencies);
        w.end_object();
    }
    w.end_object();
    w.key("packages").begin_array();
    for (const PnpmPackage& p : lock->packages)
        w.value(p.id);
    w.end_array();
    w.key("snapshots").begin_object();
    for (std::uint32_t i = 0; i < lock->snapshots.size(); ++i) {
        const PnpmSnapshot& s = lock->snapshots[i];
        w.key(s.key).begin_object();
        w.key("name").value(s.name);
        w.key("version").value(s.version);
        w.key("package").value(lock->package_of(s).id);
        w.key("integrity").value(lock->package_of(s).resolution.integrity);
        if (index)
            w.key("dir").value(index->dir(i));
        w.key("dependencies");
        keys(w, *lock, s.dependency_snapshots);
        w.key("optionalDependencies");
        keys(w, *lock, s.optional_dependency_snapshots);
        w.end_object();
    }
    w.end_object();
    w.key("closures").begin_object();
    for (const auto& [path, imp] : lock->importers) {
        std::vector<std::string> one{path};
        auto plain = importer_closure(*lock, one);
        auto linked = importer_closure(*lock, one, {.follow_links = true});
        if (!plain || !linked)
            return fail(!plain ? plain.error().message : linked.error().message);
        w.key(path).begin_object();
        w.key("snapshots").strings(plain->keys(*lock));
        w.key("links").strings(plain->links);
        w.key("withLinks").strings(linked->keys(*lock));
        w.key("importersWithLinks").strings(linked->importers);
        w.key("keyText").value(pnpm_key_text(*lock, *plain));
        w.end_object();
    }
    w.end_object();
    w.end_object();
    if (std::fwrite(w.str().data(), 1, w.str().size(), stdout) != w.str().size() || std::fputc('\n', stdout) == EOF)
        return fail("cannot write the dump to stdout");
    return 0;
}
