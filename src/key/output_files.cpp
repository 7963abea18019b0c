#include "qk/key/output_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cache/cache_fs.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"

namespace qk::key {

namespace {

using cache_fs::name_of;
using cache_fs::parent_of;

// Why a path (a pattern's text, or its literal prefix) may not be an output, or nullopt.
std::optional<std::string> refusal(std::string_view path)
{
    if (path.empty())
        return "names the workspace root itself";
    if (path.starts_with('/'))
        return "is an absolute path";
    for (std::string_view part : path_components(path))
        if (part == "." || part == "..")
            return fmt::format("has a \"{}\" component", part);
    return std::nullopt;
}

struct DirCloser {
    void operator()(DIR* d) const { ::closedir(d); }
};

class Walker {
public:
    Walker(const OutputSet& set, std::vector<OutputFile>& out) : set_(set), out_(out) {}

    // Collects what lies under directory `rel` (open as `fd`); true when it collected anything. In an
    // output named whole, a directory under which nothing is collected is itself collected.
    Result<bool> walk(UniqueFd fd, const std::string& rel, bool whole)
    {
        std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd.get()));
        if (!dir)
            return sys_error(fmt::format("cannot list output directory {}", rel.empty() ? "." : rel));
        fd.release();
        const std::size_t before = out_.size();
        while (dirent* e = ::readdir(dir.get())) {
            std::string_view name = e->d_name;
            if (name == "." || name == "..")
                continue;
            std::string child = rel.empty() ? std::string(name) : fmt::format("{}/{}", rel, name);
            unsigned type = e->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(::dirfd(dir.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                    continue;  // gone since the listing
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : 0;
            }
            if (type == DT_REG || type == DT_LNK) {
                if (set_.matches(child))
                    out_.push_back({child, type == DT_REG ? OutputFile::Kind::file : OutputFile::Kind::symlink});
                continue;
            }
            if (type != DT_DIR || OutputSet::never_entered(name))
                continue;  // sockets, fifos and devices are not outputs a cache can keep
            bool added = false;
            if (set_.may_match_under(child)) {
                UniqueFd sub(::openat(::dirfd(dir.get()), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!sub.valid()) {
                    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
                        continue;  // replaced since the listing
                    return sys_error(fmt::format("cannot open output directory {}", child));
                }
                QK_TRY(r, walk(std::move(sub), child, whole));
                added = *r;
            }
            if (whole && !added && set_.matches(child))
                out_.push_back({child, OutputFile::Kind::directory});
        }
        return out_.size() > before;
    }

private:
    const OutputSet& set_;
    std::vector<OutputFile>& out_;
};

}  // namespace

bool OutputSet::never_entered(std::string_view name)
{
    return is_special_dir(name);
}

bool OutputSet::contains(std::string_view path) const
{
    if (!qk::is_plain_relative(path))
        return false;
    auto parts = path_components(path);
    return std::none_of(parts.begin(), parts.end(), never_entered) && matches(path);
}

Result<OutputSet> OutputSet::compile(std::span<const std::string> patterns)
{
    OutputSet out;
    out.patterns_.assign(patterns.begin(), patterns.end());
    for (const std::string& pattern : patterns) {
        std::string_view body = pattern;
        const bool negated = body.starts_with('!');
        if (negated)
            body.remove_prefix(1);
        auto refuse = [&](const std::string& why) {
            return error(fmt::format("output \"{}\" {}: an output is a path inside the workspace, relative to its "
                                     "root; fix the target's outputs",
                                     pattern, why));
        };
        if (auto why = refusal(body))
            return refuse(*why);
        QK_TRY(glob, workspace::Glob::compile(body));
        QK_TRY(fileset, workspace::Glob::compile_fileset(pattern));
        out.set_.add(*fileset);
        if (negated)
            continue;
        out.any_positive_ = true;
        // Escapes resolve in the prefix, so "\.\./x" is refused here rather than walked.
        std::string prefix(glob->literal_prefix());
        if (auto why = refusal(prefix); why && (glob->is_literal() || !prefix.empty()))
            return refuse(*why);
        auto parts = path_components(prefix);
        if (std::any_of(parts.begin(), parts.end(), never_entered))
            continue;
        out.roots_.push_back({std::move(prefix), glob->is_literal()});
    }
    return out;
}

Result<std::vector<OutputFile>> collect_output_files(int root_fd, const OutputSet& outputs)
{
    std::vector<OutputFile> out;
    Walker walker(outputs, out);
    for (const OutputSet::Root& root : outputs.roots()) {
        auto parent = cache_fs::open_dir_beneath(root_fd, parent_of(root.path), false);
        if (!parent.fd.valid()) {
            if (parent.err == ENOENT || parent.err == ENOTDIR)
                continue;
            if (parent.err == ELOOP)
                return cache_fs::link_on_the_way(root.path, parent.at);
            return sys_error(fmt::format("cannot open {} to find outputs", parent.at), parent.err);
        }
        if (root.path.empty()) {  // a glob walked from the workspace root
            QK_TRY(r, walker.walk(std::move(parent.fd), "", false));
            continue;
        }
        std::string name(name_of(root.path));
        struct stat st;
        if (::fstatat(parent.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue;
            return sys_error(fmt::format("cannot stat output {}", root.path));
        }
        if (S_ISLNK(st.st_mode) && !root.whole)
            return cache_fs::link_on_the_way(root.path, root.path);
        if (!S_ISDIR(st.st_mode)) {
            if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && outputs.matches(root.path))
                out.push_back({root.path, S_ISREG(st.st_mode) ? OutputFile::Kind::file : OutputFile::Kind::symlink});
            continue;
        }
        UniqueFd fd(::openat(parent.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd.valid())
            return sys_error(fmt::format("cannot open output directory {}", root.path));
        QK_TRY(added, walker.walk(std::move(fd), root.path, root.whole));
        if (root.whole && !*added && outputs.matches(root.path))
            out.push_back({root.path, OutputFile::Kind::directory});
    }
    std::sort(out.begin(), out.end(), [](const OutputFile& a, const OutputFile& b) { return a.path < b.path; });
    out.erase(
        std::unique(out.begin(), out.end(), [](const OutputFile& a, const OutputFile& b) { return a.path == b.path; }),
        out.end());
    return out;
}

Result<std::vector<OutputFile>> collect_output_files(const std::filesystem::path& root,
                                                     std::span<const std::string> patterns)
{
    QK_TRY(outputs, OutputSet::compile(patterns));
    UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(fmt::format("cannot open the workspace root {}", root.string()));
    return collect_output_files(fd.get(), *outputs);
}

}  // namespace qk::key
