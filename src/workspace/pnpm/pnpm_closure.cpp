// What importers install, closed over dependencies, and the key text of such a set. Edges are the
// snapshots' `dependencies` and `optionalDependencies`, as Nx's pnpm parser makes them (research §1.6);
// `link:` edges lead to importers, which are project-graph edges rather than packages.
#include "qk/workspace/pnpm_closure.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace qk::workspace {

namespace {

class Walk {
public:
    Walk(const PnpmLock& lock, const PnpmClosureOptions& options) : lock_(lock), options_(options)
    {
        out_.member.assign(lock.snapshots.size(), false);
    }

    void importer(const PnpmImporter& imp)
    {
        if (!importers_.insert(imp.path).second)
            return;
        take(imp.dependencies);
        if (options_.dev)
            take(imp.dev_dependencies);
        if (options_.optional)
            take(imp.optional_dependencies);
    }

    void snapshot(std::uint32_t i)
    {
        if (out_.member[i])
            return;
        out_.member[i] = true;
        todo_.push_back(i);
    }

    PnpmClosure finish()
    {
        while (!todo_.empty()) {
            std::uint32_t i = todo_.back();
            todo_.pop_back();
            const PnpmSnapshot& s = lock_.snapshots[i];
            for (std::uint32_t d : s.dependency_snapshots)
                snapshot(d);
            if (options_.optional)
                for (std::uint32_t d : s.optional_dependency_snapshots)
                    snapshot(d);
        }
        out_.importers.assign(importers_.begin(), importers_.end());
        out_.links.assign(links_.begin(), links_.end());
        return std::move(out_);
    }

private:
    void take(const PnpmImporterDeps& deps)
    {
        for (const auto& [alias, dep] : deps) {
            if (dep.snapshot) {
                snapshot(*dep.snapshot);
            } else if (dep.link) {
                links_.insert(*dep.link);
                if (options_.follow_links)
                    if (const PnpmImporter* linked = lock_.find_importer(*dep.link))
                        importer(*linked);
            }
        }
    }

    const PnpmLock& lock_;
    const PnpmClosureOptions& options_;
    PnpmClosure out_;
    std::vector<std::uint32_t> todo_;
    std::set<std::string> importers_, links_;
};

std::string some_importers(const PnpmLock& lock)
{
    std::string out;
    std::size_t n = 0;
    for (const auto& [path, imp] : lock.importers) {
        if (n == 8) {
            out += fmt::format(", and {} more", lock.importers.size() - n);
            break;
        }
        out += (n++ ? ", " : "") + path;
    }
    return out;
}

}  // namespace

std::size_t PnpmClosure::size() const
{
    return static_cast<std::size_t>(std::count(member.begin(), member.end(), true));
}

std::vector<std::string> PnpmClosure::keys(const PnpmLock& lock) const
{
    std::vector<std::string> out;
    for (std::uint32_t i = 0; i < member.size(); ++i)
        if (member[i])
            out.push_back(lock.snapshots[i].key);
    return out;
}

Result<PnpmClosure> importer_closure(const PnpmLock& lock, std::span<const std::string> paths,
                                     const PnpmClosureOptions& options)
{
    Walk walk(lock, options);
    for (const std::string& path : paths) {
        const PnpmImporter* imp = lock.find_importer(path);
        if (!imp)
            return error(fmt::format("{}: no importer '{}' (it has {}); the lockfile is older than the workspace: "
                                     "run `pnpm install`",
                                     lock.file, path, some_importers(lock)));
        walk.importer(*imp);
    }
    return walk.finish();
}

Result<PnpmClosure> package_closure(const PnpmLock& lock, std::span<const std::string> names,
                                    const PnpmClosureOptions& options)
{
    Walk walk(lock, options);
    for (const std::string& spec : names) {
        // "name" or "name@version"; a scope's '@' is not a version separator.
        std::size_t at = spec.size() > 1 ? spec.find('@', 1) : std::string::npos;
        std::string_view name = std::string_view(spec).substr(0, at);
        std::string_view version = at == std::string::npos ? std::string_view{} : std::string_view(spec).substr(at + 1);
        bool found = false;
        auto take_named = [&](std::string_view real_name) {
            auto it = lock.snapshots_by_name.find(real_name);
            if (it == lock.snapshots_by_name.end())
                return;
            for (std::uint32_t i : it->second) {
                if (version.empty() || lock.snapshots[i].version == version) {
                    walk.snapshot(i);
                    found = true;
                }
            }
        };
        take_named(name);
        if (!found) {  // an alias an importer installs it under, as `alias-odd: npm:is-odd@3.0.1`
            for (const auto& [path, imp] : lock.importers)
                for (const PnpmImporterDeps* deps :
                     {&imp.dependencies, &imp.dev_dependencies, &imp.optional_dependencies}) {
                    auto d = deps->find(name);
                    if (d != deps->end() && d->second.snapshot) {
                        const PnpmSnapshot& s = lock.snapshots[*d->second.snapshot];
                        if (version.empty() || s.version == version) {
                            walk.snapshot(*d->second.snapshot);
                            found = true;
                        }
                    }
                }
        }
        if (!found)
            return error(fmt::format("{}: no installed package '{}'; check the name in externalDependencies (a "
                                     "package name, or name@version), or run `pnpm install` if it was just added",
                                     lock.file, spec));
    }
    return walk.finish();
}

std::string pnpm_key_text(const PnpmLock& lock, const PnpmClosure& set)
{
    std::string out;
    for (std::uint32_t i = 0; i < set.member.size() && i < lock.snapshots.size(); ++i) {
        if (!set.member[i])
            continue;
        const PnpmSnapshot& s = lock.snapshots[i];
        const PnpmResolution& r = lock.package_of(s).resolution;
        out += s.key;
        out += ' ';
        out += r.integrity.empty() ? r.text : r.integrity;
        out += '\n';
    }
    return out;
}

}  // namespace qk::workspace
