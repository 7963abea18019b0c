// The walk behind FileIndex::scan, as Nx's walker (the `ignore` crate with require_git off, hidden
// files shown, .nxignore as its custom ignore file) sees the tree: .nxignore, .ignore and .gitignore
// are read in every directory, and .git/info/exclude in every directory holding a .git directory (the
// crate does not stop at the root); an ignored directory is never entered (so nothing under it can be
// re-included); node_modules, .git and .qk are skipped by name at any depth whatever the ignore files
// say (Nx's hard-coded filter matches those names whatever their type); the entries skipped so are
// remembered (FileIndex::special_entries).
//
// Directories are listed with getdents64 on their own descriptors, a few syscalls each, and an entry
// is stat'ed only where the file system does not report its type.
#include "file_index_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/special_names.hpp"

namespace qk::key {

namespace {

std::string read_small_file(int dir_fd, const char* name)
{
    std::string text;
    UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return text;  // as the `ignore` crate does: an unreadable ignore file is no ignore file
    (void)read_all(fd.get(), text, 4096);  // what could be read counts, as a shorter file would
    return text;
}

}  // namespace

// One directory's entries, names packed in one buffer; reused across directories at the same depth.
struct Walker::Listing {
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
    std::string_view key(const Entry& e) const
    {
        return std::string_view(names).substr(e.offset, e.length + (e.type == DT_DIR));
    }
};

Walker::Walker(const WalkContext& context, const WalkStart& start, WalkOutput& out)
    : context_(context), out_(out), owner_(start.owner), path_(start.path), ignores_(start.ignores), buffer_(std::size_t{64} * 1024)
{
}

Walker::~Walker() = default;

Status Walker::walk(int fd)
{
    return dir(fd, 0, owner_, nullptr);
}

Status Walker::expand(int fd, std::vector<WalkStart>& subdirs)
{
    return dir(fd, 0, owner_, &subdirs);
}

Result<UniqueFd> Walker::open_dir(int at, const char* name, std::string_view display, const WalkContext& context)
{
    UniqueFd fd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    // Unreadable or replaced since it was listed: skipped, as Nx's walker skips it. Running out of
    // descriptors or memory would silently lose files, so that is an error.
    if (!fd.valid() && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
        return sys_error(
            fmt::format("cannot open the directory {} in the workspace {}", display, context.root.string()));
    return fd;
}

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
            return sys_error(fmt::format("cannot list the directory {} in the workspace {}",
                                         path_.empty() ? "." : path_, context_.root.string()));
        if (n == 0)
            return {};
        for (ssize_t pos = 0; pos < n;) {
            auto* d = reinterpret_cast<struct dirent64*>(buffer_.data() + pos);
            pos += d->d_reclen;
            std::string_view name(d->d_name);
            if (name == "." || name == "..")
                continue;
            SpecialDir special = special_dir(name);
            if (special == SpecialDir::qk || special == SpecialDir::node_modules) {
                remember_special(name);
                continue;
            }
            std::uint8_t type = d->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                    continue;  // gone already
                type = S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : 0;
            }
            if (special == SpecialDir::git) {
                has_[std::size_t(IgnoreSource::git_exclude)] = type == DT_DIR;
                remember_special(name);
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
            out.entries.push_back(
                {static_cast<std::uint32_t>(out.names.size()), static_cast<std::uint32_t>(name.size()), type});
            out.names.append(name);
            out.names.push_back(type == DT_DIR ? '/' : '\0');
        }
    }
}

void Walker::remember_special(std::string_view name)
{
    std::string& path = out_.specials.emplace_back();
    path.reserve(path_.size() + name.size());
    path.append(path_).append(name);
}

Status Walker::dir(int fd, std::size_t depth, std::int32_t owner, std::vector<WalkStart>* subdirs)
{
    if (listings_.size() <= depth)
        listings_.push_back(std::make_unique<Listing>());
    Listing& listing = *listings_[depth];
    QK_TRY_STATUS(list(fd, listing));

    static constexpr const char* sources[ignore_source_count] = {".nxignore", ".ignore", ".gitignore",
                                                                 ".git/info/exclude"};
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
            out_.files.push_back(path_);
            out_.owners.push_back(owner);
            path_.resize(base);
            continue;
        }
        std::int32_t child_owner = owner;
        if (auto it = context_.roots.find(path_); it != context_.roots.end())
            child_owner = it->second;
        Status s;
        if (subdirs) {
            subdirs->push_back({path_ + '/', ignores_, child_owner, out_.files.size()});
        } else {
            std::string child_name(name);  // its key in `names` runs on into the '/' after it
            QK_TRY(child, open_dir(fd, child_name.c_str(), path_, context_));
            if (child->valid()) {
                path_.push_back('/');
                s = dir(child->get(), depth + 1, child_owner, nullptr);
            }
        }
        path_.resize(base);
        if (!s)
            return s;
    }
    if (any_rules)
        ignores_.pop();
    return {};
}

}  // namespace qk::key
