#include "qk/util/atomic_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk {

Status write_file_atomically(const std::string& path, std::string_view bytes, AtomicWrite how)
{
    // mkostemp's name is never mistaken for the file itself, and two writers never share it.
    std::string tmp = path + ".tmp-XXXXXX";
    UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!fd.valid())
        return sys_error("cannot create a temporary file beside " + path);
    Status s = write_all(fd.get(), bytes);
    if (s && ::fchmod(fd.get(), how.mode) != 0)
        s = sys_error("chmod");
    if (s && how.durable && ::fsync(fd.get()) != 0)
        s = sys_error("fsync");
    if (s && ::close(fd.release()) != 0)
        s = sys_error("close");
    if (s && ::rename(tmp.c_str(), path.c_str()) != 0)
        s = sys_error("rename");
    if (!s) {
        ::unlink(tmp.c_str());
        return with_message(s.error(), "cannot write " + path + ": " + s.error().message);
    }
    return {};
}

}  // namespace qk
