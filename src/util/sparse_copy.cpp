#include "qk/util/sparse_copy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace qk {

namespace {

// The kernel may refuse to copy in the kernel (another file system, an old kernel, a special file
// system): then the bytes go through us.
bool in_kernel_refused(int err)
{
    return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == ENOTTY || err == EBADF ||
           err == EPERM;
}

Status pread_pwrite(int src, int dst, off_t at, off_t end, std::string_view what)
{
    std::vector<char> buf(std::size_t{1} << 20);
    while (at < end) {
        const auto want = static_cast<std::size_t>(std::min<off_t>(end - at, static_cast<off_t>(buf.size())));
        const ssize_t n = ::pread(src, buf.data(), want, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(fmt::format("cannot read {}", what));
        if (n == 0)
            return {};  // shorter than it was: the size cut below says what it is now
        for (ssize_t done = 0; done < n;) {
            const ssize_t w = ::pwrite(dst, buf.data() + done, static_cast<std::size_t>(n - done), at + done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return sys_error(fmt::format("cannot write {}", what));
            done += w;
        }
        at += n;
    }
    return {};
}

// One range of data, [at, end), to the same offsets in `dst`.
Status copy_range(int src, int dst, off_t at, off_t end, bool& in_kernel, std::string_view what)
{
    while (in_kernel && at < end) {
        off_t from = at, to = at;
        const auto want = static_cast<std::size_t>(std::min<off_t>(end - at, off_t{1} << 30));
        const ssize_t n = ::copy_file_range(src, &from, dst, &to, want, 0);
        if (n > 0) {
            at += n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || in_kernel_refused(errno)) {
            in_kernel = false;  // and for the ranges after this one: the answer will not change
            break;
        }
        return sys_error(fmt::format("cannot copy {}", what));
    }
    return pread_pwrite(src, dst, at, end, what);
}

}  // namespace

Status copy_sparse(int src, int dst, std::string_view what)
{
    struct stat st;
    if (::fstat(src, &st) != 0)
        return sys_error(fmt::format("cannot stat {}", what));
    const off_t size = st.st_size;
    // SEEK_DATA and SEEK_HOLE move the offset: put back where the caller left it.
    const off_t was = ::lseek(src, 0, SEEK_CUR);
    struct Restore {
        int fd;
        off_t at;
        ~Restore()
        {
            if (at >= 0)
                (void)::lseek(fd, at, SEEK_SET);  // a regular file's offset: cannot fail for a valid one
        }
    } restore{src, was};
    bool in_kernel = true;
    for (off_t at = 0; at < size;) {
        off_t data = ::lseek(src, at, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break;  // nothing but a hole from here to the end
        off_t hole = data < 0 ? size : ::lseek(src, data, SEEK_HOLE);
        if (data < 0 || hole < 0) {
            if (errno != EINVAL && errno != EOPNOTSUPP)
                return sys_error(fmt::format("cannot find the data of {}", what));
            data = at;  // a file system that cannot tell: all of it is data
            hole = size;
        }
        QK_TRY_STATUS(copy_range(src, dst, data, std::min(hole, size), in_kernel, what));
        at = hole;
    }
    if (::ftruncate(dst, size) != 0)
        return sys_error(fmt::format("cannot set the size of {}", what));
    return {};
}

}  // namespace qk
