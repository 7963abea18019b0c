#include "tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::rules {
namespace {

// Opens `rel` beneath the root refusing every link on the way: a link an earlier task put in place of
// a directory gets no rule, since Landlock would follow it.
int open_beneath(int root_fd, std::string_view rel, int flags)
{
    std::string path = rel.empty() ? std::string(".") : std::string(rel);
    struct open_how how {};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC | O_NOFOLLOW);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how));
}

void walk_dir(int fd, std::string& rel, const TreeVisitor& visit)
{
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return;
    }
    struct Entry {
        std::string name;
        unsigned char type;
    };
    std::vector<Entry> entries;
    bool special = false;
    while (dirent* e = ::readdir(d)) {
        std::string_view name(e->d_name);
        if (name == "." || name == "..")
            continue;
        if (is_special_dir(name)) {
            special = true;
            continue;
        }
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st {};
            if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        }
        if (type == DT_DIR || type == DT_REG)
            entries.push_back({std::string(name), type});
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    int dir_fd = ::dirfd(d);
    if (visit.dir(rel, special) == WalkStep::skip) {
        ::closedir(d);
        return;
    }
    const std::size_t base = rel.size();
    for (const Entry& e : entries) {
        rel.resize(base);
        if (!rel.empty())
            rel += '/';
        rel += e.name;
        if (e.type == DT_REG) {
            visit.file(rel);
            continue;
        }
        int sub = ::openat(dir_fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            walk_dir(sub, rel, visit);
    }
    rel.resize(base);
    ::closedir(d);
}

}  // namespace

void walk_tree(int root_fd, std::string_view start, const TreeVisitor& visit)
{
    int fd = open_beneath(root_fd, start, O_RDONLY);
    if (fd < 0)
        return;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return;
    }
    std::string rel(start);
    if (S_ISREG(st.st_mode)) {
        ::close(fd);
        visit.file(rel);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        ::close(fd);
        return;
    }
    walk_dir(fd, rel, visit);
}

char kind_without_links(int root_fd, std::string_view rel)
{
    UniqueFd fd(open_beneath(root_fd, rel, O_PATH));
    if (!fd.valid())
        return 0;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return 0;
    // O_PATH | O_NOFOLLOW hands back a link named last rather than failing: it is no file to allow.
    return S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 0;
}

}  // namespace qk::rules
