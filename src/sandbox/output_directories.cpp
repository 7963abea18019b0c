#include "qk/sandbox/output_directories.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace qk::sandbox {

std::vector<std::string> MadeDirectories::acquire(const std::filesystem::path& root,
                                                  const std::vector<std::string>& dirs)
{
    std::vector<std::string> held;
    std::lock_guard lock(mutex_);
    for (const std::string& dir : dirs) {
        // Each component from the root down: stop at a link or a file, which the output walk refuses too.
        bool ok = true;
        for (std::size_t end = 0; ok && end != std::string::npos;) {
            end = dir.find('/', end + 1);
            std::string part = dir.substr(0, end);
            if (std::find(held.begin(), held.end(), part) != held.end())
                continue;  // a parent of two of `dirs`, already held once for this task
            auto holding = holders_.find(part);
            std::string full = (root / part).string();
            struct stat st {};
            if (::lstat(full.c_str(), &st) == 0) {
                ok = S_ISDIR(st.st_mode);
                if (ok && holding != holders_.end()) {
                    ++holding->second;  // made for a task still running: hold it too
                    held.push_back(part);
                }
                continue;
            }
            // Missing, though perhaps made for a task still running that removed it (rm -rf out): made again.
            if (errno != ENOENT || ::mkdir(full.c_str(), 0777) != 0) {
                ok = false;
                continue;
            }
            if (holding != holders_.end())
                ++holding->second;
            else
                holders_.emplace(part, 1);
            held.push_back(part);
        }
    }
    return held;
}

void MadeDirectories::release(const std::filesystem::path& root, const std::vector<std::string>& held)
{
    std::lock_guard lock(mutex_);
    // Held parents first, so the reverse removes children first; rmdir leaves a non-empty one.
    for (auto it = held.rbegin(); it != held.rend(); ++it) {
        auto h = holders_.find(*it);
        if (h == holders_.end() || --h->second > 0)
            continue;
        holders_.erase(h);
        ::rmdir((root / *it).c_str());
    }
}

OutputDirectories OutputDirectories::create(const std::filesystem::path& root, const std::vector<std::string>& dirs,
                                            MadeDirectories& shared)
{
    OutputDirectories out;
    out.root_ = root;
    out.shared_ = &shared;
    out.created_ = shared.acquire(root, dirs);
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

OutputDirectories& OutputDirectories::operator=(OutputDirectories&& o) noexcept
{
    if (this != &o) {
        remove_empty();
        root_ = std::move(o.root_);
        created_ = std::move(o.created_);
        shared_ = o.shared_;
        o.created_.clear();
        o.shared_ = nullptr;
    }
    return *this;
}

void OutputDirectories::remove_empty()
{
    if (shared_) {
        shared_->release(root_, created_);
    } else {
        // Created parents first, so the reverse removes children first; rmdir leaves a non-empty one.
        for (auto it = created_.rbegin(); it != created_.rend(); ++it)
            ::rmdir((root_ / *it).c_str());
    }
    created_.clear();
}

}  // namespace qk::sandbox
