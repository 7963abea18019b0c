// pnpm-lock.yaml -> PnpmLock. Shapes: pnpm/pnpm:lockfile/types/src/lockfileFileTypes.ts (LockfileFileV9),
// lockfile/fs/src/lockfileFormatConverters.ts (the inline single-project form) and yamlDocuments.ts (pnpm
// 11's env document); research §3.
#include "qk/workspace/pnpm_lock.hpp"
#include "qk/workspace/pnpm_dep_path.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "pnpm_read.hpp"

namespace qk::workspace {

namespace {

using pnpm_read::Reader;
using pnpm_yaml::Node;

constexpr std::string_view regenerate = "regenerate it with `pnpm install` (after resolving any merge conflict), or "
                                        "fix it by hand";

// Which pnpm wrote an older lockfile format, for the message.
std::string writer_of(std::string_view v)
{
    if (v.starts_with("5.3") || v.starts_with("5.2") || v.starts_with("5.1") || v.starts_with("5.0"))
        return "pnpm 6 or older";
    if (v.starts_with("5.4"))
        return "pnpm 7";
    if (v.starts_with("6."))
        return "pnpm 8";
    if (v.starts_with("7."))
        return "a pnpm 9 pre-release";
    return "an older pnpm";
}

PnpmMark mark(const Node& n)
{
    return {n.line, n.column};
}

// "packages/a" + "../b" -> "packages/b", lexically; "." is the lockfile's directory.
std::string join_relative(std::string_view base, std::string_view rel)
{
    std::vector<std::string_view> parts;
    auto push = [&](std::string_view p) {
        while (!p.empty()) {
            std::size_t slash = p.find('/');
            std::string_view seg = p.substr(0, slash);
            p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash + 1);
            if (seg.empty() || seg == ".")
                continue;
            if (seg == ".." && !parts.empty() && parts.back() != "..")
                parts.pop_back();
            else
                parts.push_back(seg);
        }
    };
    if (!rel.starts_with('/'))
        push(base);
    push(rel);
    std::string out = rel.starts_with('/') ? "/" : "";
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i)
            out += '/';
        out += parts[i];
    }
    return out.empty() ? "." : out;
}

class LockReader {
public:
    LockReader(Reader& r, PnpmLock& lock) : r_(r), lock_(lock) {}

    void read(const Node& root)
    {
        if (!root.is_map())
            return r_.fail(root,
                           fmt::format("expected a mapping of lockfile sections, found {}", pnpm_yaml::describe(root)),
                           "is this a pnpm lockfile? regenerate it with `pnpm install`");
        read_version(root);
        if (r_.failed())
            return;
        const Node* importers = nullptr;
        const Node* packages = nullptr;
        const Node* snapshots = nullptr;
        PnpmImporter inline_root;  // the single-project form: the root importer's fields at top level
        inline_root.path = ".";
        bool has_inline = false;
        r_.for_each(root, [&](const std::string& key, const Node& v) {
            if (key == "settings")
                read_settings(v);
            else if (key == "importers")
                importers = &v;
            else if (key == "packages")
                packages = &v;
            else if (key == "snapshots")
                snapshots = &v;
            else if (key == "catalogs")
                r_.for_each(v, [&](const std::string& name, const Node& c) { read_deps(c, lock_.catalogs[name]); });
            else if (key == "overrides")
                r_.string_map(v, lock_.overrides);
            else if (key == "patchedDependencies")
                read_patches(v);
            else if (key == "packageExtensionsChecksum")
                lock_.package_extensions_checksum = r_.string(v);
            else if (key == "pnpmfileChecksum")
                lock_.pnpmfile_checksum = r_.string(v);
            else if (key == "dependencies" || key == "devDependencies" || key == "optionalDependencies" ||
                     key == "publishDirectory") {
                read_importer_field(key, v, inline_root);
                has_inline = true;
            }
        });
        if (r_.failed())
            return;
        if (importers) {
            if (has_inline)
                return r_.fail(root,
                               "found both `importers` and top-level dependencies; a lockfile has one or the other",
                               regenerate);
            r_.for_each_entry(*importers, [&](const Node& key, const Node& v) {
                const std::string& path = key.text;
                PnpmImporter& imp = lock_.importers[path];
                imp.path = path;
                imp.mark = mark(key);
                r_.for_each(v, [&](const std::string& key, const Node& f) { read_importer_field(key, f, imp); });
            });
        } else {
            inline_root.mark = {1, 1};
            lock_.importers.emplace(".", std::move(inline_root));
        }
        if (packages)
            read_packages(*packages);
        if (snapshots)
            read_snapshots(*snapshots);
        snapshots_ = snapshots;
        if (!r_.failed())
            resolve();
    }

private:
    void read_version(const Node& root)
    {
        const Node* v = r_.find(root, "lockfileVersion");
        if (!v)
            return r_.fail(root, "no `lockfileVersion`: this is not a pnpm lockfile, or its first lines are lost",
                           "qk reads lockfileVersion '9.0' (pnpm 9, 10 and 11 write it); regenerate it with "
                           "`pnpm install`");
        std::string ver = r_.string(*v);
        lock_.lockfile_version = ver;
        if (ver == "9" || ver.starts_with("9."))
            return;
        std::string_view todo = "qk reads lockfileVersion '9.0', which pnpm 9, 10 and 11 write";
        double major = 0;
        try {
            major = std::stod(ver);
        } catch (...) {
        }
        if (major > 9)
            return r_.fail(*v, fmt::format("lockfileVersion '{}' is newer than this qk understands", ver),
                           fmt::format("{}; write the lockfile with pnpm 9, 10 or 11, or update qk", todo));
        r_.fail(*v, fmt::format("lockfileVersion '{}' was written by {}", ver, writer_of(ver)),
                fmt::format("{}: run `pnpm install` with pnpm 9 or later (for example `corepack use pnpm@9`) to "
                            "convert it",
                            todo));
    }

    void read_settings(const Node& v)
    {
        r_.for_each(v, [&](const std::string& key, const Node& s) {
            if (key == "autoInstallPeers")
                lock_.settings.auto_install_peers = r_.boolean(s);
            else if (key == "excludeLinksFromLockfile")
                lock_.settings.exclude_links_from_lockfile = r_.boolean(s);
            else if (key == "dedupePeers")
                lock_.settings.dedupe_peers = r_.boolean(s);
            else if (key == "injectWorkspacePackages")
                lock_.settings.inject_workspace_packages = r_.boolean(s);
            else if (key == "peersSuffixMaxLength")
                lock_.settings.peers_suffix_max_length = r_.unsigned_number(s);
        });
    }

    void read_patches(const Node& v)
    {
        r_.for_each(v, [&](const std::string& key, const Node& p) {
            PnpmPatch& patch = lock_.patched_dependencies[key];
            if (p.is_scalar()) {  // older form: the hash alone
                patch.hash = r_.string(p);
                return;
            }
            r_.for_each(p, [&](const std::string& f, const Node& x) {
                if (f == "hash")
                    patch.hash = r_.string(x);
                else if (f == "path")
                    patch.path = r_.string(x);
            });
        });
    }

    void read_importer_field(const std::string& key, const Node& v, PnpmImporter& imp)
    {
        if (key == "dependencies")
            read_deps(v, imp.dependencies);
        else if (key == "devDependencies")
            read_deps(v, imp.dev_dependencies);
        else if (key == "optionalDependencies")
            read_deps(v, imp.optional_dependencies);
        else if (key == "publishDirectory")
            imp.publish_directory = r_.string(v);
    }

    void read_deps(const Node& v, PnpmImporterDeps& out)
    {
        r_.for_each_entry(v, [&](const Node& key, const Node& d) {
            const std::string& alias = key.text;
            PnpmImporterDep& dep = out[alias];
            dep.mark = mark(key);
            if (!d.is_map())
                return r_.fail(d,
                               fmt::format("expected `{{specifier, version}}` for the dependency '{}', found {}",
                                           alias, pnpm_yaml::describe(d)),
                               regenerate);
            bool has_version = false;
            r_.for_each(d, [&](const std::string& f, const Node& x) {
                if (f == "specifier")
                    dep.specifier = r_.string(x);
                else if (f == "version") {
                    dep.version = r_.string(x);
                    has_version = true;
                }
            });
            if (!has_version)
                r_.fail(d, fmt::format("the dependency '{}' has no `version`", alias), regenerate);
        });
    }

    void read_resolution(const Node& v, PnpmResolution& res)
    {
        if (!v.is_map())
            return r_.fail(v, fmt::format("expected a mapping for `resolution`, found {}", pnpm_yaml::describe(v)),
                           regenerate);
        std::vector<std::pair<std::string, std::string>> fields;
        r_.for_each(v, [&](const std::string& key, const Node& x) {
            std::string value = x.is_scalar() ? r_.string(x) : r_.canonical(x);
            if (key == "integrity")
                res.integrity = value;
            else if (key == "tarball")
                res.tarball = value;
            else if (key == "path")
                res.path = value;
            else if (key == "type")
                res.type = value;
            else if (key == "repo")
                res.repo = value;
            else if (key == "commit")
                res.commit = value;
            else if (key == "directory")
                res.directory = value;
            fields.emplace_back(key, std::move(value));
        });
        std::sort(fields.begin(), fields.end());
        for (const auto& [k, val] : fields) {
            if (!res.text.empty())
                res.text += ' ';
            res.text += k + '=' + val;
        }
    }

    void read_packages(const Node& v)
    {
        lock_.packages.reserve(v.count / 2);
        r_.for_each_entry(v, [&](const Node& key, const Node& p) {
            const std::string& id = key.text;
            PnpmPackage& pkg = lock_.packages.emplace_back();
            pkg.id = id;
            pkg.mark = mark(key);
            bool has_resolution = false;
            r_.for_each(p, [&](const std::string& key, const Node& x) {
                if (key == "resolution") {
                    read_resolution(x, pkg.resolution);
                    has_resolution = true;
                } else if (key == "engines")
                    r_.string_map(x, pkg.engines);
                else if (key == "peerDependencies")
                    r_.string_map(x, pkg.peer_dependencies);
                else if (key == "peerDependenciesMeta")
                    r_.for_each(x, [&](const std::string& name, const Node& meta) {
                        const Node* opt = r_.find(meta, "optional");
                        if (opt && r_.boolean(*opt))
                            pkg.optional_peers.push_back(name);
                    });
                else if (key == "cpu")
                    r_.platforms(x, pkg.cpu);
                else if (key == "os")
                    r_.platforms(x, pkg.os);
                else if (key == "libc")
                    r_.platforms(x, pkg.libc);
                else if (key == "bundledDependencies") {
                    if (!(x.is_scalar() && x.plain))  // `true` bundles them all
                        r_.strings(x, pkg.bundled_dependencies);
                } else if (key == "hasBin")
                    pkg.has_bin = r_.boolean(x);
                else if (key == "name")
                    pkg.name = r_.string(x);
                else if (key == "version")
                    pkg.version = r_.string(x);
                else if (key == "deprecated")
                    pkg.deprecated = r_.string(x);
            });
            if (!has_resolution)
                r_.fail(p, fmt::format("the package '{}' has no `resolution`", id), regenerate);
        });
        std::sort(lock_.packages.begin(), lock_.packages.end(),
                  [](const PnpmPackage& a, const PnpmPackage& b) { return a.id < b.id; });
    }

    void read_snapshots(const Node& v)
    {
        lock_.snapshots.reserve(v.count / 2);
        r_.for_each_entry(v, [&](const Node& key_node, const Node& s) {
            const std::string& key = key_node.text;
            PnpmSnapshot& snap = lock_.snapshots.emplace_back();
            snap.key = key;
            snap.mark = mark(key_node);
            PnpmDepPath dp = parse_dep_path(key);
            if (dp.version.empty())
                return r_.fail(key_node,
                               fmt::format("'{}' is not a dep path (expected <name>@<version>, then any "
                                           "`(patch_hash=...)` and `(peer@version)` groups)",
                                           key),
                               regenerate);
            snap.name = dp.name;
            snap.version = dp.version;
            r_.for_each(s, [&](const std::string& f, const Node& x) {
                if (f == "dependencies")
                    r_.string_map(x, snap.dependencies);
                else if (f == "optionalDependencies")
                    r_.string_map(x, snap.optional_dependencies);
                else if (f == "transitivePeerDependencies")
                    r_.strings(x, snap.transitive_peer_dependencies);
                else if (f == "optional")
                    snap.optional = r_.boolean(x);
                else if (f == "patched")
                    snap.patched = r_.boolean(x);
                else if (f == "id")
                    snap.id = r_.string(x);
            });
        });
        std::sort(lock_.snapshots.begin(), lock_.snapshots.end(),
                  [](const PnpmSnapshot& a, const PnpmSnapshot& b) { return a.key < b.key; });
    }

    // Where `alias` is under `field` of the snapshot: looked up again only for a message.
    PnpmMark entry_mark(const PnpmSnapshot& s, std::string_view field, std::string_view alias) const
    {
        PnpmMark out = s.mark;
        if (!snapshots_)
            return out;
        r_.for_each(*snapshots_, [&](const std::string& key, const Node& v) {
            if (key != s.key)
                return;
            if (const Node* deps = r_.find(v, field))
                r_.for_each_entry(*deps, [&](const Node& k, const Node&) {
                    if (k.text == alias)
                        out = mark(k);
                });
        });
        return out;
    }

    // The snapshot `ref` names; `where_is` gives the mark for the message, computed only if there is none.
    template <class Mark>
    std::uint32_t snapshot_for(Mark&& where_is, std::string_view where, std::string_view alias, std::string_view ref)
    {
        std::optional<std::string> dp = ref_to_dep_path(ref, alias);
        std::optional<std::uint32_t> i = dp ? lock_.find_snapshot(*dp) : std::nullopt;
        if (!i) {
            const PnpmMark m = where_is();
            r_.fail_at(m.line, m.column,
                       fmt::format("{} installs '{}' as '{}', but `snapshots` has no '{}'", where, alias, ref,
                                   dp.value_or(std::string(ref))),
                       "the lockfile is incomplete: " + std::string(regenerate));
            return 0;  // read no further: resolve() stops at the failure
        }
        return *i;
    }

    // Links each snapshot to its package, its dependencies to snapshots, and importers' dependencies to
    // snapshots or linked directories.
    void resolve()
    {
        for (std::uint32_t i = 0; i < lock_.snapshots.size() && !r_.failed(); ++i) {
            PnpmSnapshot& s = lock_.snapshots[i];
            lock_.snapshots_by_name[s.name].push_back(i);
            std::string_view id = remove_dep_path_suffix(s.key);
            auto it = std::lower_bound(lock_.packages.begin(), lock_.packages.end(), id,
                                       [](const PnpmPackage& p, std::string_view k) { return p.id < k; });
            if (it == lock_.packages.end() || it->id != id)
                return r_.fail_at(s.mark.line, s.mark.column,
                                  fmt::format("the snapshot '{}' has no entry '{}' under `packages`", s.key, id),
                                  "the lockfile is incomplete: " + std::string(regenerate));
            s.package = static_cast<std::uint32_t>(it - lock_.packages.begin());
            std::string where = fmt::format("the snapshot '{}'", s.key);
            for (const auto& [alias, ref] : s.dependencies) {
                if (ref.starts_with("link:"))
                    s.links[alias] = ref;
                else
                    s.dependency_snapshots.push_back(
                        snapshot_for([&, &alias = alias] { return entry_mark(s, "dependencies", alias); }, where,
                                     alias, ref));
            }
            for (const auto& [alias, ref] : s.optional_dependencies) {
                if (ref.starts_with("link:"))
                    s.links[alias] = ref;
                else
                    s.optional_dependency_snapshots.push_back(
                        snapshot_for([&, &alias = alias] { return entry_mark(s, "optionalDependencies", alias); },
                                     where, alias, ref));
            }
        }
        for (auto& [path, imp] : lock_.importers) {
            if (r_.failed())
                return;
            std::string where = fmt::format("the importer '{}'", path);
            for (PnpmImporterDeps* deps : {&imp.dependencies, &imp.dev_dependencies, &imp.optional_dependencies}) {
                for (auto& [alias, dep] : *deps) {
                    if (dep.version.starts_with("link:"))
                        dep.link = join_relative(path, std::string_view(dep.version).substr(5));
                    else
                        dep.snapshot = snapshot_for([&dep = dep] { return dep.mark; }, where, alias, dep.version);
                }
            }
        }
    }

    Reader& r_;
    PnpmLock& lock_;
    const Node* snapshots_ = nullptr;
};

bool has_conflict_marker(std::string_view text, std::size_t& line)
{
    line = 1;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        std::string_view l = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        if (l.starts_with("<<<<<<< ") || l == "<<<<<<<" || l.starts_with(">>>>>>> ") || l == "=======")
            return true;
        if (eol == std::string_view::npos)
            break;
        pos = eol + 1;
        ++line;
    }
    return false;
}

}  // namespace

Result<PnpmLock> parse_pnpm_lock_text(std::string_view text, const std::string& file)
{
    std::size_t conflict_line = 0;
    if (has_conflict_marker(text, conflict_line))
        return error(fmt::format("{}:{}:1: an unresolved merge conflict marker; run `pnpm install`, which resolves "
                                 "conflicts in pnpm-lock.yaml by itself, or resolve it by hand",
                                 file, conflict_line));
    QK_TRY(docs, pnpm_yaml::parse(text, file, regenerate));
    // pnpm 11 may put an env document (configDependencies, packageManagerDependencies) first; the lockfile
    // is then the second document (yamlDocuments.ts extractMainDocument).
    std::vector<pnpm_yaml::Doc>& all = *docs;
    if (all.empty())
        return error(fmt::format("{}:1:1: the file is empty; regenerate it with `pnpm install`", file));
    if (all.size() > 2)
        return error(fmt::format("{}:{}:{}: expected one YAML document, or pnpm's env document and then the "
                                 "lockfile, found {}; {}",
                                 file, all[2].root_node().line, all[2].root_node().column, all.size(), regenerate));
    const pnpm_yaml::Doc& doc = all.back();
    if (all.size() == 1 && doc.root_node().is_map()) {
        Reader probe(doc, file);
        if (!probe.find(doc.root_node(), "lockfileVersion") &&
            (probe.find(doc.root_node(), "configDependencies") ||
             probe.find(doc.root_node(), "packageManagerDependencies")))
            return error(fmt::format("{}:1:1: the file holds only pnpm's env document (configDependencies, "
                                     "packageManagerDependencies) and no lockfile; run `pnpm install` to write it",
                                     file));
    }
    PnpmLock lock;
    lock.file = file;
    Reader reader(doc, file);
    LockReader(reader, lock).read(doc.root_node());
    if (reader.failure())
        return *reader.failure();
    return lock;
}

Result<PnpmLock> parse_pnpm_lock(const std::string& path)
{
    QK_TRY(text, qk::read_file(path));
    return parse_pnpm_lock_text(*text, path);
}

std::optional<std::uint32_t> PnpmLock::find_snapshot(std::string_view key) const
{
    auto it = std::lower_bound(snapshots.begin(), snapshots.end(), key,
                               [](const PnpmSnapshot& s, std::string_view k) { return s.key < k; });
    if (it == snapshots.end() || it->key != key)
        return std::nullopt;
    return static_cast<std::uint32_t>(it - snapshots.begin());
}

const PnpmImporter* PnpmLock::find_importer(std::string_view path) const
{
    auto it = importers.find(path);
    return it == importers.end() ? nullptr : &it->second;
}


}  // namespace qk::workspace
