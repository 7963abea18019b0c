// node_modules/.pnpm/<dir> -> snapshot: the mapping issue 5 places reads with. Each snapshot's dir is
// computed once with the algorithm of the pnpm major that made the install (research §3.4).
#include "qk/workspace/pnpm_lock.hpp"

namespace qk::workspace {

PnpmStoreIndex::PnpmStoreIndex(const PnpmLock& lock, PnpmLayout layout) : layout_(layout)
{
    dirs_.reserve(lock.snapshots.size());
    by_dir_.reserve(lock.snapshots.size());
    for (std::uint32_t i = 0; i < lock.snapshots.size(); ++i) {
        dirs_.push_back(pnpm_dir_name(lock.snapshots[i].key, layout));
        names_.push_back(lock.snapshots[i].name);
        auto [it, inserted] = by_dir_.emplace(dirs_.back(), i);
        if (!inserted)
            collisions_.emplace_back(it->second, i);
    }
}

std::optional<std::uint32_t> PnpmStoreIndex::find(std::string_view dir) const
{
    auto it = by_dir_.find(dir);
    if (it == by_dir_.end())
        return std::nullopt;
    return it->second;
}

std::optional<PnpmStoreIndex::Place> PnpmStoreIndex::place(std::string_view path) const
{
    std::size_t slash = path.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    std::optional<std::uint32_t> snapshot = find(path.substr(0, slash));
    if (!snapshot)
        return std::nullopt;
    std::string_view rest = path.substr(slash + 1);
    constexpr std::string_view nm = "node_modules/";
    if (!rest.starts_with(nm))
        return std::nullopt;
    rest.remove_prefix(nm.size());
    // <name> is one component, or two for a scope.
    std::size_t end = rest.find('/');
    if (!rest.empty() && rest[0] == '@' && end != std::string_view::npos)
        end = rest.find('/', end + 1);
    std::string_view name = rest.substr(0, end);
    if (name.empty() || name == "@" || (name[0] == '@' && name.find('/') == std::string_view::npos))
        return std::nullopt;
    std::string_view inside = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    return Place{*snapshot, name, inside, name == names_[*snapshot]};
}

}  // namespace qk::workspace
