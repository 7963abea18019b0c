// The registry's files, in BaseRegistry::home():
//   bases/base-XXXXXX          one directory that holds (or held) runs' sandboxes, canonical
//   bases/.lock                taken to add or forget one, so a base made again is never forgotten
//   live/live-XXXXXX           a live run's mark, locked by it while it lives
//   live/live-XXXXXX.covers    what that run's commands are kept from: "DEV INO PATH" a line, after a
//                              first line "capable" where they keep capabilities over the host's files
// Covers are compared by device and inode, not by name: a task over the overlay may move a covered
// directory's parent away and make a fresh directory where its name was, one its own cover is not on.
#include "qk/enforce/base_registry.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include <fmt/format.h>

#include "own_directory.hpp"
#include "qk/util/io.hpp"
#include "tree_ops.hpp"

namespace qk::enforce {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kBasePrefix = "base-";
constexpr std::string_view kMarkPrefix = "live-";
constexpr std::string_view kCoversSuffix = ".covers";
constexpr const char* kBasesLock = ".lock";
constexpr std::string_view kCapable = "capable\n";

Result<UniqueFd> open_subdir(int dir, const char* name, const fs::path& shown)
{
    if (::mkdirat(dir, name, 0700) != 0 && errno != EEXIST)
        return sys_error(fmt::format("cannot create {}", (shown / name).string()));
    UniqueFd fd(::openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(fmt::format("cannot open {}", (shown / name).string()));
    return fd;
}

// Writes `text` to `name` in `dir` whole or not at all: readers never see a part.
Status write_whole(int dir, const std::string& name, std::string_view text, const fs::path& shown)
{
    const std::string tmp = tree::random_name(".tmp-");
    UniqueFd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid())
        return sys_error(fmt::format("cannot write in {}", shown.string()));
    Status written = write_all(fd.get(), text);
    if (written && ::renameat(dir, tmp.c_str(), dir, name.c_str()) == 0)
        return {};
    const int err = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    return written ? sys_error(fmt::format("cannot write {}", (shown / name).string()), err) : written;
}

Result<std::string> read_at(int dir, const std::string& name)
{
    UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(name);
    std::string text;
    QK_TRY_STATUS(read_all(fd.get(), text));
    return text;
}

// The lines of `text`, without their newlines.
std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    return out;
}

// Whether a covers file holds the directory with device `dev` and inode `ino`.
bool covers_holds(std::string_view text, dev_t dev, ino_t ino)
{
    for (std::string_view line : lines_of(text)) {
        unsigned long long d = 0, i = 0;
        auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), d);
        if (ec != std::errc() || p == line.data() + line.size() || *p != ' ')
            continue;
        auto [q, ec2] = std::from_chars(p + 1, line.data() + line.size(), i);
        if (ec2 == std::errc() && d == dev && i == ino)
            return true;
    }
    return false;
}

}  // namespace

fs::path BaseRegistry::home()
{
    return fs::path("/var/tmp") / fmt::format("qk-sandbox-{}", ::geteuid());
}

Result<BaseRegistry> BaseRegistry::open(const fs::path& dir)
{
    auto own = open_own_directory(dir);
    if (!own)
        return error(fmt::format("{}: {}; it records where runs keep their sandboxes, so that each run keeps its "
                                 "commands from all of them: make it yours, or remove it",
                                 dir.string(), own.error().message));
    BaseRegistry r;
    r.dir_ = own->path;
    QK_TRY(bases, open_subdir(own->fd.get(), "bases", r.dir_));
    QK_TRY(live, open_subdir(own->fd.get(), "live", r.dir_));
    r.bases_fd_ = std::move(*bases);
    r.live_fd_ = std::move(*live);
    // Locked before it takes its name: a run that finds it never takes a mark being made for a dead one.
    const std::string tmp = tree::random_name(".tmp-");
    r.mark_fd_.reset(::openat(r.live_fd_.get(), tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!r.mark_fd_.valid() || ::flock(r.mark_fd_.get(), LOCK_EX | LOCK_NB) != 0)
        return sys_error(fmt::format("cannot make a live mark in {}", (r.dir_ / "live").string()));
    for (int attempt = 0;; ++attempt) {
        std::string name = tree::random_name(kMarkPrefix);
        if (::renameat2(r.live_fd_.get(), tmp.c_str(), r.live_fd_.get(), name.c_str(), RENAME_NOREPLACE) == 0) {
            r.mark_ = std::move(name);
            break;
        }
        if (errno != EEXIST || attempt == 100) {
            const int err = errno;
            ::unlinkat(r.live_fd_.get(), tmp.c_str(), 0);
            return sys_error(fmt::format("cannot name a live mark in {}", (r.dir_ / "live").string()), err);
        }
    }
    return r;
}

BaseRegistry& BaseRegistry::operator=(BaseRegistry&& other) noexcept
{
    if (this != &other) {
        destroy();
        dir_ = std::move(other.dir_);
        bases_fd_ = std::move(other.bases_fd_);
        live_fd_ = std::move(other.live_fd_);
        mark_fd_ = std::move(other.mark_fd_);
        mark_ = std::move(other.mark_);
    }
    return *this;
}

BaseRegistry::~BaseRegistry()
{
    destroy();
}

void BaseRegistry::destroy() noexcept
{
    if (!mark_fd_.valid())
        return;
    ::unlinkat(live_fd_.get(), (mark_ + std::string(kCoversSuffix)).c_str(), 0);
    ::unlinkat(live_fd_.get(), mark_.c_str(), 0);
    mark_fd_.reset();
}

Status BaseRegistry::add(const fs::path& base) const
{
    UniqueFd lock(::openat(bases_fd_.get(), kBasesLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0)
        return sys_error(fmt::format("cannot lock {}/bases", dir_.string()));
    QK_TRY(entries, tree::list_dir(bases_fd_.get()));
    for (const tree::DirEntry& e : *entries)
        if (e.name.starts_with(kBasePrefix))
            if (auto text = read_at(bases_fd_.get(), e.name); text && *text == base.native())
                return {};
    return write_whole(bases_fd_.get(), tree::random_name(kBasePrefix), base.native(), dir_ / "bases");
}

Result<std::vector<std::string>> BaseRegistry::bases() const
{
    UniqueFd lock(::openat(bases_fd_.get(), kBasesLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0)
        return sys_error(fmt::format("cannot lock {}/bases", dir_.string()));
    QK_TRY(entries, tree::list_dir(bases_fd_.get()));
    std::vector<std::string> out;
    for (const tree::DirEntry& e : *entries) {
        if (!e.name.starts_with(kBasePrefix))
            continue;
        auto text = read_at(bases_fd_.get(), e.name);
        if (!text)
            continue;
        std::error_code ec;
        fs::path real = fs::canonical(*text, ec);
        if (!ec && fs::is_directory(real, ec))
            out.push_back(real.native());
        else if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
            ::unlinkat(bases_fd_.get(), e.name.c_str(), 0);  // gone: a run that makes it again adds it again
    }
    return out;
}

Status BaseRegistry::publish(const std::vector<std::string>& covers, bool keep_capabilities) const
{
    std::string text(keep_capabilities ? kCapable : "");
    for (const std::string& dir : covers) {
        struct stat st;
        if (::stat(dir.c_str(), &st) == 0)
            text += fmt::format("{} {} {}\n", st.st_dev, st.st_ino, dir);
    }
    return write_whole(live_fd_.get(), mark_ + std::string(kCoversSuffix), text, dir_ / "live");
}

Result<bool> BaseRegistry::covered_by_live_runs(const std::string& base, bool capable_only) const
{
    struct stat st;
    if (::stat(base.c_str(), &st) != 0)
        return sys_error(fmt::format("cannot stat {}", base));
    QK_TRY(entries, tree::list_dir(live_fd_.get()));
    bool covered = true;
    for (const tree::DirEntry& e : *entries) {
        if (!e.name.starts_with(kMarkPrefix) || e.name.ends_with(kCoversSuffix) || e.name == mark_)
            continue;
        UniqueFd mark(::openat(live_fd_.get(), e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!mark.valid())
            continue;  // gone since the listing: that run has ended
        if (::flock(mark.get(), LOCK_SH | LOCK_NB) == 0) {  // nobody holds it: a killed run's
            ::unlinkat(live_fd_.get(), (e.name + std::string(kCoversSuffix)).c_str(), 0);
            ::unlinkat(live_fd_.get(), e.name.c_str(), 0);
            continue;
        }
        auto covers = read_at(live_fd_.get(), e.name + std::string(kCoversSuffix));
        if (covers && capable_only && !covers->starts_with(kCapable))
            continue;
        if (!covers || !covers_holds(*covers, st.st_dev, st.st_ino))
            covered = false;  // go on: the rest of the killed runs' marks still go
    }
    return covered;
}

}  // namespace qk::enforce
