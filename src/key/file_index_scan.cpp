// The walk behind FileIndex::scan, as Nx's walker (the `ignore` crate with require_git off, hidden
// files shown, .nxignore as its custom ignore file) sees the tree: ignore files are read in every
// directory, an ignored directory is never entered (so nothing under it can be re-included), and
// node_modules, .git and .qk are skipped by name at any depth, whatever the ignore files say (Nx's
// hard-coded filter also matches those names whatever their type).
//
// getdents64 over directory fds keeps it to one syscall per directory for listing and needs a stat
// only where the file system does not report the entry type.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "ignore_rules.hpp"
#include "qk/key/file_index.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

namespace {

// One directory's entries, names packed in one buffer; reused across directories at the same depth.
struct Listing {
    struct Entry {
        std::uint32_t offset;
        std::uint32_t length;  // of the name; a directory's sort key also holds the '/' after it
        std::uint8_t type;     // DT_REG, DT_LNK or DT_DIR
    };
    std::string names;
    std::vector<Entry> entries;

    std::string_view name(const Entry& e) const { return std::string_view(names).substr(e.offset, e.length); }
    // Sorting siblings by name, with '/' after a directory's, puts the whole walk in bytewise order of
    // full paths: "a-b" < "a/x" although "a" < "a-b".
    std::string_view key(const Entry& e) const { return std::string_view(names).substr(e.offset, e.length + (e.type == DT_DIR)); }
};

std::string read_small_file(int dir_fd, const char* name)
{
    std::string text;
    UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return text;  // as the `ignore` crate does: an unreadable ignore file is no ignore file
    char buf[16384];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

class Walker {
public:
    Walker(const workspace::Workspace& ws, std::vector<std::string>& files, std::vector<std::int32_t>& owners)
        : ws_(ws), files_(files), owners_(owners), buffer_(64 * 1024)
    {
        // The same answer as Workspace::project_owning: for "." the last such project, for any other
        // root the first (by name); deeper roots win by being met later in the walk.
        const auto& projects = ws.projects();
        for (std::size_t i = 0; i < projects.size(); ++i) {
            const std::string& r = projects[i].root;
            if (r == ".")
                root_owner_ = static_cast<std::int32_t>(i);
            else if (!r.empty())
                roots_.emplace(std::string_view(r), static_cast<std::int32_t>(i));
        }
    }

    Status run(int root_fd) { return dir(root_fd, 0, root_owner_); }

private:
    Status list(int fd, Listing& out);
    Status dir(int fd, std::size_t depth, std::int32_t owner);

    const workspace::Workspace& ws_;
    std::vector<std::string>& files_;
    std::vector<std::int32_t>& owners_;
    std::vector<char> buffer_;
    std::vector<std::unique_ptr<Listing>> listings_;  // by depth; stable while deeper ones are used
    std::string path_;  // the current directory, workspace-relative, with a trailing '/' ("" at the root)
    IgnoreStack ignores_;
    std::unordered_map<std::string_view, std::int32_t> roots_;
    std::int32_t root_owner_ = -1;
    // Which ignore sources the directory being listed has.
    bool has_[ignore_source_count] = {};
};

Status Walker::list(int fd, Listing& out)
{
    out.names.clear();
    out.entries.clear();
    std::fill(std::begin(has_), std::end(has_), false);
    for (;;) {
        ssize_t n = ::getdents64(fd, buffer_.data(), buffer_.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(fmt::format("cannot list the directory {} in the workspace {}", path_.empty() ? "." : path_,
                                         ws_.root().string()));
        if (n == 0)
            return {};
        for (ssize_t pos = 0; pos < n;) {
            auto* d = reinterpret_cast<struct dirent64*>(buffer_.data() + pos);
            pos += d->d_reclen;
            std::string_view name(d->d_name);
            if (name == "." || name == ".." || name == ".qk" || name == "node_modules")
                continue;
            std::uint8_t type = d->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                    continue;  // gone already
                type = S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : 0;
            }
            if (name == ".git") {
                has_[std::size_t(IgnoreSource::git_exclude)] = type == DT_DIR;
                continue;
            }
            if (name == ".gitignore")
                has_[std::size_t(IgnoreSource::gitignore)] = true;
            else if (name == ".ignore")
                has_[std::size_t(IgnoreSource::ignore)] = true;
            else if (name == ".nxignore")
                has_[std::size_t(IgnoreSource::nxignore)] = true;
            if (type != DT_REG && type != DT_LNK && type != DT_DIR)
                continue;  // sockets, fifos, devices: not files Nx hashes
            out.entries.push_back({static_cast<std::uint32_t>(out.names.size()), static_cast<std::uint32_t>(name.size()), type});
            out.names.append(name);
            out.names.push_back(type == DT_DIR ? '/' : '\0');
        }
    }
}

Status Walker::dir(int fd, std::size_t depth, std::int32_t owner)
{
    if (listings_.size() <= depth)
        listings_.push_back(std::make_unique<Listing>());
    Listing& listing = *listings_[depth];
    if (Status s = list(fd, listing); !s)
        return s;

    static constexpr const char* sources[ignore_source_count] = {".nxignore", ".ignore", ".gitignore", ".git/info/exclude"};
    IgnoreStack::Files rules;
    bool any_rules = false;
    for (std::size_t i = 0; i < ignore_source_count; ++i) {
        if (!has_[i])
            continue;
        rules[i] = IgnoreFile::parse(read_small_file(fd, sources[i]));
        any_rules |= !rules[i].empty();
    }
    if (any_rules)
        ignores_.push(path_.size(), std::move(rules));

    std::sort(listing.entries.begin(), listing.entries.end(),
              [&](const Listing::Entry& a, const Listing::Entry& b) { return listing.key(a) < listing.key(b); });

    const std::size_t base = path_.size();
    for (const Listing::Entry& e : listing.entries) {
        std::string_view name = listing.name(e);
        path_.append(name);
        bool is_dir = e.type == DT_DIR;
        if (ignores_.depth() > 0 && ignores_.ignored(path_, name, is_dir)) {
            path_.resize(base);
            continue;
        }
        if (!is_dir) {
            files_.push_back(path_);
            owners_.push_back(owner);
            path_.resize(base);
            continue;
        }
        std::string child_name(name);  // its key in `names` runs on into the '/' after it
        UniqueFd child(::openat(fd, child_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!child.valid()) {
            // Unreadable or replaced since the listing: skipped, as Nx's walker skips it. Running out
            // of descriptors or memory would silently lose files, so that is an error.
            if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
                return sys_error(fmt::format("cannot open the directory {} in the workspace {}", path_,
                                             ws_.root().string()));
            path_.resize(base);
            continue;
        }
        std::int32_t child_owner = owner;
        if (auto it = roots_.find(path_); it != roots_.end())
            child_owner = it->second;
        path_.push_back('/');
        Status s = dir(child.get(), depth + 1, child_owner);
        path_.resize(base);
        if (!s)
            return s;
    }
    if (any_rules)
        ignores_.pop();
    return {};
}

}  // namespace

Status FileIndex::walk(const workspace::Workspace& ws, int root_fd)
{
    Walker walker(ws, files_, owner_);
    return walker.run(root_fd);
}

}  // namespace qk::key
