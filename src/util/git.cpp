#include "qk/util/git.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/util/subprocess.hpp"

namespace qk {

Result<std::string> git(const std::filesystem::path& root, const std::vector<std::string>& args)
{
    std::vector<std::string> argv{"git", "-C", root.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = run_captured(argv, {.stderr_to = CaptureOptions::Stderr::apart, .search_path = true});
    if (!run)
        return with_message(run.error(), "cannot run git (is it installed? apt install git): " + run.error().message);
    if (!run->succeeded()) {
        std::string text = run->err.empty() ? run->out : run->err;
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        return error(fmt::format("`git {}` failed: {}", fmt::join(args, " "), text));
    }
    return std::move(run->out);
}

}  // namespace qk
