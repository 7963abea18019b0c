#include "qk/rules/installed_packages.hpp"

#include <system_error>

#include <fmt/core.h>

#include "qk/util/path_within.hpp"

namespace qk::rules {

Result<std::shared_ptr<const InstalledPackages>> InstalledPackages::load(const std::filesystem::path& root,
                                                                       const workspace::PnpmLock* lock,
                                                                       std::string* why_none)
{
    auto none = [&](std::string why) -> Result<std::shared_ptr<const InstalledPackages>> {
        if (why_none)
            *why_none = std::move(why);
        return std::shared_ptr<const InstalledPackages>();
    };
    if (!lock)
        return none("no pnpm-lock.yaml at the workspace root");
    std::filesystem::path yaml = root / "node_modules" / ".modules.yaml";
    std::error_code ec;
    if (!std::filesystem::exists(yaml, ec))
        return none("nothing is installed (no node_modules/.modules.yaml)");
    auto modules = workspace::parse_pnpm_modules_yaml(yaml.string());
    if (!modules)
        return error(fmt::format("{}; run pnpm install again to rewrite it", modules.error().message));
    if (!modules->node_linker.empty() && modules->node_linker != "isolated")
        return none(fmt::format("node-linker={} has no store of packages to place reads in", modules->node_linker));
    std::string dir = modules->virtual_store_dir.empty() ? ".pnpm" : modules->virtual_store_dir;
    // An absolute or outer virtual store (pnpm's global virtual store) holds nothing in the workspace; one
    // spelled with "." or ".." anywhere would never match the canonical paths it is compared with.
    if (!is_plain_relative(dir))
        return none(fmt::format("the virtual store {} lies outside node_modules, or is not a plain path in it", dir));
    std::shared_ptr<InstalledPackages> p(new InstalledPackages(lock, std::move(modules).value()));
    p->prefix_ = "node_modules/" + dir + "/";
    return std::shared_ptr<const InstalledPackages>(std::move(p));
}

std::optional<std::uint32_t> InstalledPackages::manifest_of(std::string_view rel) const
{
    if (!rel.starts_with(prefix_) || !rel.ends_with("/package.json"))
        return std::nullopt;
    auto place = index_.place(rel.substr(prefix_.size()));
    if (!place || !place->own || place->rest != "package.json")
        return std::nullopt;
    return place->snapshot;
}

std::optional<InstalledPackages::OwnFile> InstalledPackages::own_file(std::string_view rel) const
{
    if (!rel.starts_with(prefix_))
        return std::nullopt;
    auto place = index_.place(rel.substr(prefix_.size()));
    if (!place || !place->own || place->rest.empty())
        return std::nullopt;
    return OwnFile{place->snapshot, place->rest};
}

}  // namespace qk::rules
