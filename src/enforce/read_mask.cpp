#include "qk/enforce/read_mask.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {
namespace {

// The visible paths as a tree of components: a node is visible whole, or partly (some of what lies
// beneath it is).
struct Node {
    bool whole = false;
    std::map<std::string, Node, std::less<>> children;
    std::set<std::string, std::less<>> hide;  // names that are not there now, hidden should they appear
};

void insert(Node& root, std::string_view path)
{
    Node* n = &root;
    while (!n->whole) {
        if (path.empty()) {
            n->whole = true;
            n->children.clear();
            n->hide.clear();
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

// A path that may appear: hidden at the first component that leaves the visible tree, unless it lies
// in what is visible whole.
void insert_hidden(Node& root, std::string_view path)
{
    Node* n = &root;
    while (!path.empty() && !n->whole) {
        std::size_t slash = path.find('/');
        std::string_view name = path.substr(0, slash);
        auto it = n->children.find(name);
        if (it == n->children.end()) {
            if (!is_special_dir(name))
                n->hide.emplace(name);
            return;
        }
        n = &it->second;
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    }
}

class Builder {
public:
    explicit Builder(ReadMaskCounts& counts) : counts_(counts) {}

    Status directory(const Node& node, int real_fd, int mask_fd, const std::string& rel)
    {
        UniqueFd listing(::openat(real_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        DIR* d = listing.valid() ? ::fdopendir(listing.get()) : nullptr;
        if (!d)
            return sys_error(fmt::format("cannot list {} to build the sandbox's view of it", where(rel)));
        listing.release();
        std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
        std::set<std::string, std::less<>> seen;
        while (dirent* e = ::readdir(d)) {
            std::string_view name(e->d_name);
            if (name == "." || name == "..")
                continue;
            seen.emplace(name);
            auto child = node.children.find(name);
            if (child != node.children.end() && child->second.whole)
                continue;
            if (is_special_dir(name))
                continue;  // bound through from the real workspace
            struct stat st {};
            if (::fstatat(real_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;  // gone since it was listed
            if (S_ISLNK(st.st_mode))
                continue;  // resolves through this same view
            const std::string path = rel.empty() ? std::string(name) : rel + "/" + std::string(name);
            if (!S_ISDIR(st.st_mode)) {
                QK_TRY_STATUS(whiteout(mask_fd, e->d_name, path));
                continue;
            }
            if (::mkdirat(mask_fd, e->d_name, 0700) != 0)
                return sys_error(fmt::format("cannot make {} in the sandbox's view", path));
            UniqueFd made(::openat(mask_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!made.valid())
                return sys_error(fmt::format("cannot open {} in the sandbox's view", path));
            if (child == node.children.end()) {
                // Nothing beneath it is visible: its contents are left out whole.
                if (::fsetxattr(made.get(), "user.overlay.opaque", "y", 1, 0) != 0)
                    return sys_error(fmt::format("cannot mark {} opaque in the sandbox's view (the sandbox directory's "
                                                 "filesystem must take user.* extended attributes)",
                                                 path));
                ++counts_.hidden_dirs;
            } else {
                UniqueFd real(::openat(real_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!real.valid())
                    continue;  // replaced since: what is there now is not what the rules walked
                ++counts_.kept_dirs;
                QK_TRY_STATUS(directory(child->second, real.get(), made.get(), path));
            }
            look_like(made.get(), st);
        }
        for (const std::string& name : node.hide)
            if (!seen.contains(name))
                QK_TRY_STATUS(whiteout(mask_fd, name.c_str(), rel.empty() ? name : rel + "/" + name));
        return {};
    }

private:
    Status whiteout(int dir_fd, const char* name, const std::string& path)
    {
        if (::mknodat(dir_fd, name, S_IFCHR, ::makedev(0, 0)) != 0)
            return sys_error(fmt::format("cannot hide {} in the sandbox's view (an overlay whiteout)", path));
        ++counts_.hidden_files;
        return {};
    }

    // A directory of the view shows its own mode, owner and times where the workspace's is merged with
    // it or hidden behind it: those of the real one.
    static void look_like(int fd, const struct stat& real)
    {
        (void)::fchmod(fd, real.st_mode & 07777);
        if (::geteuid() == 0)
            (void)::fchown(fd, real.st_uid, real.st_gid);
        const struct timespec times[2] = {real.st_atim, real.st_mtim};
        (void)::futimens(fd, times);
    }

    std::string where(const std::string& rel) const { return rel.empty() ? std::string("the workspace") : rel; }

    ReadMaskCounts& counts_;
};

}  // namespace

Result<ReadMaskCounts> build_read_mask(const std::string& root, const std::filesystem::path& mask,
                                       const std::vector<std::string>& visible, const std::vector<std::string>& also_hidden)
{
    Node tree;
    for (const std::string& v : visible)
        insert(tree, v);
    for (const std::string& h : also_hidden)
        insert_hidden(tree, h);
    ReadMaskCounts counts;
    if (tree.whole)
        return counts;
    UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid())
        return sys_error(fmt::format("cannot open the workspace {}", root));
    UniqueFd mask_fd(::open(mask.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!mask_fd.valid())
        return sys_error(fmt::format("cannot open {}", mask.string()));
    Builder builder(counts);
    QK_TRY_STATUS(builder.directory(tree, root_fd.get(), mask_fd.get(), ""));
    struct stat st {};
    if (::fstat(root_fd.get(), &st) == 0) {
        (void)::fchmod(mask_fd.get(), st.st_mode & 07777);
        if (::geteuid() == 0)
            (void)::fchown(mask_fd.get(), st.st_uid, st.st_gid);
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        (void)::futimens(mask_fd.get(), times);
    }
    return counts;
}

}  // namespace qk::enforce
