#include "qk/enforce/read_mask.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {
namespace {

// The readable paths as a tree of components: a node is readable whole, or partly (some of what lies
// beneath it is), or is a path the run's other tasks may write, kept out of view (hidden).
struct Node {
    bool whole = false;
    bool readable_below = false;  // a readable path lies at or beneath it
    bool hidden = false;          // a path other tasks may write: its content as it is now at most
    std::map<std::string, Node, std::less<>> children;
};

void insert(Node& root, std::string_view path)
{
    Node* n = &root;
    while (!n->whole) {
        n->readable_below = true;
        if (path.empty()) {
            n->whole = true;
            n->children.clear();
            return;
        }
        std::size_t slash = path.find('/');
        std::string_view name = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
        auto it = n->children.find(name);
        if (it == n->children.end())
            it = n->children.emplace(std::string(name), Node{}).first;
        n = &it->second;
    }
}

// A path that may appear while the task runs (what a task beside it writes), unless it lies in what is
// readable whole, or in .git, .qk or node_modules (bound through).
void insert_hidden(Node& root, std::string_view path)
{
    Node* n = &root;
    while (!path.empty() && !n->whole) {
        std::size_t slash = path.find('/');
        std::string_view name = path.substr(0, slash);
        if (is_special_dir(name))
            return;
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
        auto it = n->children.find(name);
        if (it == n->children.end())
            it = n->children.emplace(std::string(name), Node{}).first;
        n = &it->second;
    }
    if (!n->whole && !n->readable_below)
        n->hidden = true;
}

// A directory of the view shows its own mode, owner and times where the workspace's is merged with it or
// stands behind it: those of the real one.
void look_like(int fd, const struct stat& real)
{
    (void)::fchmod(fd, real.st_mode & 07777);
    if (::geteuid() == 0)
        (void)::fchown(fd, real.st_uid, real.st_gid);
    const struct timespec times[2] = {real.st_atim, real.st_mtim};
    (void)::futimens(fd, times);
}

class Builder {
public:
    // `mirror`: the overlay is mounted by the host's root, with the run's mirror as its lowest layer:
    // its xattrs are trusted.*, and refused directories point there rather than being mirrored here.
    Builder(ReadMaskCounts& counts, std::optional<StandInOwner> owner, bool mirror)
        : counts_(counts), owner_(owner), mirror_(mirror),
          opaque_xattr_(mirror ? "trusted.overlay.opaque" : "user.overlay.opaque")
    {
    }

    // A directory partly readable: merged with the workspace's, a stand-in for each file beside what may
    // be read, a refused tree for each directory of which nothing may be.
    Status directory(const Node& node, int real_fd, int mask_fd, const std::string& rel)
    {
        std::set<std::string, std::less<>> seen;
        Status walked = each_entry(real_fd, rel, [&](std::string_view name, const struct stat& st) -> Status {
            seen.emplace(name);
            if (mirror_ && rel.empty() && name == kMirrorName)
                return {};  // the whiteout at the root stands there: the mirror's name is not the workspace's
            auto child = node.children.find(name);
            const Node* below = child == node.children.end() ? nullptr : &child->second;
            if ((below && below->whole) || is_special_dir(name) || S_ISLNK(st.st_mode))
                return {};  // readable, bound through, or resolving through this same view
            const std::string path = join(rel, name);
            const std::string c_name(name);
            if (!S_ISDIR(st.st_mode))
                return stand_in(mask_fd, c_name, st, path);
            QK_TRY(made, make_dir(mask_fd, c_name, path));
            if (below && (below->readable_below || (!below->hidden && !in_mirror(path)))) {
                UniqueFd real(::openat(real_fd, c_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (real.valid()) {
                    ++counts_.kept_dirs;
                    QK_TRY_STATUS(directory(*below, real.get(), made->get(), path));
                }
            } else if (in_mirror(path)) {
                // Nothing beneath it may be read: the run's mirror holds its names as the run started
                // (read_mask.hpp, build_mirror), which the overlay follows the redirect to. What a task
                // beside it writes there meanwhile does not appear.
                const std::string to = "/" + std::string(kMirrorName) + "/" + path;
                if (::fsetxattr(made->get(), "trusted.overlay.redirect", to.data(), to.size(), 0) != 0)
                    return sys_error(fmt::format("cannot point {} at the run's mirror in the sandbox's view", path));
                ++counts_.redirected_dirs;
            } else {
                UniqueFd real(::openat(real_fd, c_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!real.valid())
                    return {};  // replaced since it was listed: what is there now is not what the rules walked
                // Nothing beneath it may be read: the names as they are, none of the content, and nothing
                // that appears in the workspace's meanwhile (opaque).
                QK_TRY_STATUS(mark_opaque(made->get(), path));
                ++counts_.refused_dirs;
                QK_TRY_STATUS(refused_tree(real.get(), made->get(), path));
            }
            look_like(made->get(), st);
            return {};
        });
        if (!walked)
            return walked;
        for (const auto& [name, below] : node.children)
            if (!seen.contains(name) && (below.hidden || !below.readable_below))
                QK_TRY_STATUS(whiteout(mask_fd, name.c_str(), join(rel, name)));
        return {};
    }

    // The run's mirror: every name of the workspace as a refused tree (but what .git, .qk and
    // node_modules hold).
    Status mirror(int real_fd, int mirror_fd) { return refused_tree(real_fd, mirror_fd, ""); }

    // Where the mask's refused directories point (kMirrorName in the run's mirror), or -1.
    void point_at(UniqueFd mirror_top) { mirror_top_ = std::move(mirror_top); }

private:
    // Whether the run's mirror holds `path` as a directory: a directory made since the run started is not.
    bool in_mirror(const std::string& path) const
    {
        struct stat st {};
        return mirror_top_.valid() && ::fstatat(mirror_top_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode);
    }

    // A directory of which nothing may be read, below an opaque one: every name again, links as they are.
    Status refused_tree(int real_fd, int mask_fd, const std::string& rel)
    {
        return each_entry(real_fd, rel, [&](std::string_view name, const struct stat& st) -> Status {
            const std::string path = join(rel, name);
            const std::string c_name(name);
            if (S_ISLNK(st.st_mode))
                return copy_link(real_fd, mask_fd, c_name, st, path);
            if (!S_ISDIR(st.st_mode))
                return stand_in(mask_fd, c_name, st, path);
            QK_TRY(made, make_dir(mask_fd, c_name, path));
            if (!is_special_dir(name)) {  // .git, .qk, node_modules: an empty place for the bind
                UniqueFd real(::openat(real_fd, c_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (real.valid())
                    QK_TRY_STATUS(refused_tree(real.get(), made->get(), path));
            }
            look_like(made->get(), st);
            return {};
        });
    }

    template <typename F>
    Status each_entry(int real_fd, const std::string& rel, F&& f)
    {
        UniqueFd listing(::openat(real_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        DIR* d = listing.valid() ? ::fdopendir(listing.get()) : nullptr;
        if (!d)
            return sys_error(fmt::format("cannot list {} to build the sandbox's view of it", where(rel)));
        listing.release();
        std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
        while (dirent* e = ::readdir(d)) {
            std::string_view name(e->d_name);
            if (name == "." || name == "..")
                continue;
            struct stat st {};
            if (::fstatat(real_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;  // gone since it was listed
            QK_TRY_STATUS(f(name, st));
        }
        return {};
    }

    // Mode 000 and an owner the task has no capability over: opening it fails with EACCES, as the spec
    // says a refused read does. Its size and times are the file's, so stat answers as without the sandbox
    // but for the mode and owner; a stand-in takes no space (sparse, on a tmpfs).
    Status stand_in(int dir_fd, const std::string& name, const struct stat& real, const std::string& path)
    {
        UniqueFd fd(::openat(dir_fd, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0));
        if (!fd.valid())
            return sys_error(fmt::format("cannot put a stand-in for {} in the sandbox's view", path));
        if (S_ISREG(real.st_mode) && real.st_size > 0 && ::ftruncate(fd.get(), real.st_size) != 0)
            return sys_error(fmt::format("cannot size the stand-in for {} in the sandbox's view", path));
        if (owner_ && ::fchown(fd.get(), owner_->uid, owner_->gid) != 0)
            return sys_error(fmt::format("cannot give the stand-in for {} an owner the task has no right over", path));
        (void)::fchmod(fd.get(), 0);  // a umask cannot add bits, but be plain about it
        const struct timespec times[2] = {real.st_atim, real.st_mtim};
        (void)::futimens(fd.get(), times);
        ++counts_.stand_ins;
        return {};
    }

    Status copy_link(int real_fd, int mask_fd, const std::string& name, const struct stat& st, const std::string& path)
    {
        // st_size is the target's length on most filesystems, 0 on some (procfs-like): grow until it fits.
        auto target = read_link_at(real_fd, name.c_str(), static_cast<std::size_t>(st.st_size));
        if (!target)
            return {};  // gone since it was listed
        if (::symlinkat(target->c_str(), mask_fd, name.c_str()) != 0)
            return sys_error(fmt::format("cannot copy the link {} into the sandbox's view", path));
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        (void)::utimensat(mask_fd, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
        return {};
    }

    Status mark_opaque(int dir_fd, const std::string& path)
    {
        if (::fsetxattr(dir_fd, opaque_xattr_, "y", 1, 0) != 0)
            return sys_error(fmt::format("cannot mark {} opaque in the sandbox's view (the sandbox directory's "
                                         "filesystem must take {} extended attributes)",
                                         path, mirror_ ? "trusted.*" : "user.*"));
        return {};
    }

    Result<UniqueFd> make_dir(int mask_fd, const std::string& name, const std::string& path)
    {
        if (::mkdirat(mask_fd, name.c_str(), 0700) != 0)
            return sys_error(fmt::format("cannot make {} in the sandbox's view", path));
        UniqueFd made(::openat(mask_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!made.valid())
            return sys_error(fmt::format("cannot open {} in the sandbox's view", path));
        return made;
    }

    Status whiteout(int dir_fd, const char* name, const std::string& path)
    {
        if (::mknodat(dir_fd, name, S_IFCHR, ::makedev(0, 0)) != 0)
            return sys_error(fmt::format("cannot hide {} in the sandbox's view (an overlay whiteout)", path));
        ++counts_.hidden;
        return {};
    }

    static std::string join(const std::string& rel, std::string_view name)
    {
        return rel.empty() ? std::string(name) : rel + "/" + std::string(name);
    }

    std::string where(const std::string& rel) const { return rel.empty() ? std::string("the workspace") : rel; }

    ReadMaskCounts& counts_;
    std::optional<StandInOwner> owner_;
    bool mirror_;
    const char* opaque_xattr_;
    UniqueFd mirror_top_;
};

}  // namespace

Result<ReadMaskCounts> build_read_mask(const std::string& root, const std::filesystem::path& mask,
                                       const std::vector<std::string>& visible, const std::vector<std::string>& also_hidden,
                                       std::optional<StandInOwner> owner, const std::string& mirror_layer)
{
    const bool mirror = !mirror_layer.empty();
    Node tree;
    for (const std::string& v : visible)
        insert(tree, v);
    for (const std::string& h : also_hidden)
        insert_hidden(tree, h);
    ReadMaskCounts counts;
    UniqueFd mask_fd(::open(mask.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!mask_fd.valid())
        return sys_error(fmt::format("cannot open {}", mask.string()));
    // The mirror's own directory, in its layer's root, is not the workspace's.
    if (mirror && ::mknodat(mask_fd.get(), kMirrorName, S_IFCHR, ::makedev(0, 0)) != 0)
        return sys_error(fmt::format("cannot hide the run's mirror in {}", mask.string()));
    if (tree.whole)
        return counts;
    UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid())
        return sys_error(fmt::format("cannot open the workspace {}", root));
    Builder builder(counts, owner, mirror);
    if (mirror) {
        UniqueFd top(::open((mirror_layer + "/" + kMirrorName).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!top.valid())
            return sys_error(fmt::format("cannot open the run's mirror of the workspace ({})", mirror_layer));
        builder.point_at(std::move(top));
    }
    QK_TRY_STATUS(builder.directory(tree, root_fd.get(), mask_fd.get(), ""));
    struct stat st {};
    if (::fstat(root_fd.get(), &st) == 0)
        look_like(mask_fd.get(), st);
    return counts;
}

Result<ReadMaskCounts> build_mirror(const std::string& root, int mirror_fd, StandInOwner owner)
{
    UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid())
        return sys_error(fmt::format("cannot open the workspace {}", root));
    if (::mkdirat(mirror_fd, kMirrorName, 0755) != 0)
        return sys_error("cannot make the run's mirror of the workspace");
    UniqueFd top(::openat(mirror_fd, kMirrorName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top.valid())
        return sys_error("cannot open the run's mirror of the workspace");
    // The layer lies above the workspace, opaque: a redirect finds the names the mirror holds and nothing
    // of a workspace directory of the same name (which a task could fill with what it may not read).
    if (::fsetxattr(top.get(), "trusted.overlay.opaque", "y", 1, 0) != 0)
        return sys_error("cannot mark the run's mirror of the workspace opaque");
    ReadMaskCounts counts;
    Builder builder(counts, owner, true);
    QK_TRY_STATUS(builder.mirror(root_fd.get(), top.get()));
    return counts;
}

}  // namespace qk::enforce
