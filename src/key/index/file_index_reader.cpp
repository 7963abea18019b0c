// FileReader: a small file is read whole into a reused buffer and hashed in one go (XXH3's one-shot
// and streaming digests are equal, so this equals hash_file); a large one is streamed by hash_file.
#include "file_index_reader.hpp"

#include <fcntl.h>
#include <unistd.h>
#include "qk/util/io.hpp"

namespace qk::key {

namespace {

// Files larger than this are streamed rather than held in memory.
constexpr std::size_t whole_read_limit = 1 << 20;

}  // namespace

Status FileReader::enter(std::string_view path)
{
    std::size_t slash = path.rfind('/');
    std::string_view dir = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
    base_.assign(slash == std::string_view::npos ? path : path.substr(slash + 1));
    if (dir == dir_ && dir_open_)
        return {};
    dir_.assign(dir);
    dir_fd_.reset();
    dir_open_ = dir.empty();
    if (dir_open_)
        return {};
    dir_fd_.reset(::openat(root_fd_, dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd_.valid())
        return sys_error("cannot open the directory " + dir_);
    dir_open_ = true;
    return {};
}

Status FileReader::stat(std::string_view path, struct stat& st)
{
    QK_TRY_STATUS(enter(path));
    if (::fstatat(dir_fd(), base_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return sys_error("stat");
    return {};
}

Result<Hash128> FileReader::hash(std::string_view path, const struct stat& st)
{
    if (S_ISLNK(st.st_mode)) {
        QK_TRY(target, read_link_at(dir_fd(), base_.c_str(), static_cast<std::size_t>(st.st_size)));
        // Length-prefixed fields under a tag: never the plain content hash of a file holding the text.
        return Hasher().field("qk:symlink").field(*target).digest();
    }
    if (!S_ISREG(st.st_mode))
        return error("it is no longer a regular file or a symbolic link");
    if (static_cast<std::size_t>(st.st_size) >= whole_read_limit)
        return hash_file(root_ / path);

    UniqueFd fd(::openat(dir_fd(), base_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return sys_error("open");
    // One byte more than the size stat'ed, to see the end of the file in the same read when it held.
    std::size_t have = 0;
    buffer_.resize(static_cast<std::size_t>(st.st_size) + 1);
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer_.data() + have, buffer_.size() - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error("read");
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
        if (have == buffer_.size()) {
            if (have >= whole_read_limit)
                return hash_file(root_ / path);  // it grew since the stat: stream it
            buffer_.resize(buffer_.size() * 2);
        }
    }
    return hash_bytes(std::string_view(buffer_.data(), have));
}

}  // namespace qk::key
