#include "qk/enforce/upper_layer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fmt/format.h>

#include "qk/util/unique_fd.hpp"
#include "tree_ops.hpp"

namespace qk::enforce {

std::string_view to_string(ChangeKind kind)
{
    switch (kind) {
    case ChangeKind::removed: return "removed";
    case ChangeKind::replaced_directory: return "replaced_directory";
    case ChangeKind::created_directory: return "created_directory";
    case ChangeKind::file: return "file";
    case ChangeKind::symlink: return "symlink";
    case ChangeKind::special: return "special";
    }
    return "unknown";
}

namespace {

// Only "y" hides the lower directory. "x" says the directory holds xattr whiteouts but stays merged. An
// overlay mounted by the host's root (qk as root) keeps it in trusted.*, one in a user namespace in user.*.
bool is_opaque(int dir_fd)
{
    for (const char* name : {"trusted.overlay.opaque", "user.overlay.opaque"}) {
        char v[2];
        ssize_t n = ::fgetxattr(dir_fd, name, v, sizeof v);
        if (n >= 0)
            return n == 1 && v[0] == 'y';
    }
    return false;
}

class Reader {
public:
    explicit Reader(std::vector<Change>& out) : out_(out) {}

    // `up` is the upper directory at `rel`; `ws` the workspace directory there, or -1 under a created
    // or replaced directory (where the upper holds everything and nothing is merged).
    Status walk(int up, int ws, const std::string& rel)
    {
        auto entries = tree::list_dir(up);
        if (!entries)
            return sys_error(fmt::format("cannot list {} in the upper layer", shown(rel)), entries.error().sys_errno);
        for (const tree::DirEntry& e : *entries)
            if (auto s = entry(up, ws, tree::join(rel, e.name), e); !s)
                return s;
        return {};
    }

private:
    static std::string shown(const std::string& rel) { return rel.empty() ? "the root" : rel; }

    Status entry(int up, int ws, const std::string& rel, const tree::DirEntry& e)
    {
        struct stat st {
        };
        unsigned type = e.type;
        const bool need_stat = type == DT_UNKNOWN || type == DT_CHR || type == DT_REG;
        if (need_stat) {
            if (::fstatat(up, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                return sys_error(fmt::format("cannot read {} in the upper layer", rel));
            type = IFTODT(st.st_mode);
        }
        switch (type) {
        case DT_DIR: return directory(up, ws, rel, e.name);
        case DT_LNK: out_.push_back({rel, ChangeKind::symlink}); return {};
        case DT_REG:
        case DT_CHR:
            if (tree::is_whiteout(up, e.name, st))
                return whiteout(ws, rel, e.name);
            out_.push_back({rel, type == DT_REG ? ChangeKind::file : ChangeKind::special});
            return {};
        default: out_.push_back({rel, ChangeKind::special}); return {};
        }
    }

    Status whiteout(int ws, const std::string& rel, const std::string& name)
    {
        struct stat st;
        if (ws >= 0 && ::fstatat(ws, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
            out_.push_back({rel, ChangeKind::removed});
        return {};
    }

    Status directory(int up, int ws, const std::string& rel, const std::string& name)
    {
        UniqueFd sub(::openat(up, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid())
            return sys_error(fmt::format("cannot open {} in the upper layer{}", rel,
                                         errno == EACCES ? " (a command left it unreadable)" : ""));
        UniqueFd ws_sub;
        if (ws >= 0) {
            // O_NOFOLLOW: a workspace link where the upper has a directory is replaced, never entered.
            ws_sub.reset(::openat(ws, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!ws_sub.valid() && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                return sys_error(fmt::format("cannot open {} in the workspace", rel));
        }
        if (!ws_sub.valid()) {
            out_.push_back({rel, ChangeKind::created_directory});
            return walk(sub.get(), -1, rel);
        }
        if (is_opaque(sub.get())) {
            out_.push_back({rel, ChangeKind::replaced_directory});
            return walk(sub.get(), -1, rel);
        }
        return walk(sub.get(), ws_sub.get(), rel);
    }

    std::vector<Change>& out_;
};

}  // namespace

Result<std::vector<Change>> read_upper_layer(int upper_fd, int workspace_fd)
{
    std::vector<Change> out;
    Reader reader(out);
    if (auto s = reader.walk(upper_fd, workspace_fd, ""); !s)
        return s.error();
    return out;
}

Result<std::vector<Change>> read_upper_layer(const std::filesystem::path& upper_dir,
                                             const std::filesystem::path& workspace_root)
{
    UniqueFd up(::open(upper_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!up.valid())
        return sys_error(fmt::format("cannot open upper layer {}", upper_dir.string()));
    UniqueFd ws(::open(workspace_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!ws.valid())
        return sys_error(fmt::format("cannot open workspace {}", workspace_root.string()));
    return read_upper_layer(up.get(), ws.get());
}

}  // namespace qk::enforce
