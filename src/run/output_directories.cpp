#include "output_directories.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace qk::run {

OutputDirectories OutputDirectories::create(const std::filesystem::path& root, const std::vector<std::string>& dirs)
{
    OutputDirectories out;
    out.root_ = root;
    for (const std::string& dir : dirs) {
        // Each component from the root down: stop at a link or a file, which the output walk refuses too.
        bool ok = true;
        for (std::size_t end = 0; ok && end != std::string::npos;) {
            end = dir.find('/', end + 1);
            std::string part = dir.substr(0, end);
            std::string full = (root / part).string();
            struct stat st {};
            if (::lstat(full.c_str(), &st) == 0) {
                ok = S_ISDIR(st.st_mode);
                continue;
            }
            if (errno != ENOENT || ::mkdir(full.c_str(), 0777) != 0) {
                ok = false;
                continue;
            }
            out.created_.push_back(part);
        }
    }
    return out;
}

OutputDirectories OutputDirectories::missing(const std::filesystem::path& root, const std::vector<std::string>& dirs)
{
    OutputDirectories out;
    out.root_ = root;
    for (const std::string& dir : dirs) {
        struct stat st {};
        if (::lstat((root / dir).c_str(), &st) != 0 && errno == ENOENT)
            out.created_.push_back(dir);
    }
    return out;
}

void OutputDirectories::remove_empty()
{
    // Created parents first, so the reverse removes children first; rmdir leaves a non-empty one.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it)
        ::rmdir((root_ / *it).c_str());
    created_.clear();
}

}  // namespace qk::run
