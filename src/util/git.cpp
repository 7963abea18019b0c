#include "qk/util/git.hpp"

#include <sys/wait.h>

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/util/printable.hpp"
#include "qk/util/subprocess.hpp"

namespace qk {
namespace {

// On git's command line, before the subcommand. Every one of these is configuration git would otherwise
// take from .git/config (which a task can write in a plain or audited run), ~/.gitconfig or an include.
const std::vector<std::string>& no_execution()
{
    static const std::vector<std::string> options = {
        "--no-pager",
        // A hook program, or git's fsmonitor daemon, started as soon as a command reads the index.
        "-c", "core.fsmonitor=false",
        // None of qk's commands runs a hook; one that would must not find the task's.
        "-c", "core.hooksPath=/dev/null",
        // No transport at all: ssh (core.sshCommand), a credential helper, or a remote helper would run
        // for a partial clone's lazy fetch of an object qk's command needs.
        "-c", "protocol.allow=never",
        // gpg.program, for git log's signatures.
        "-c", "log.showSignature=false",
    };
    return options;
}

bool is_diff_like(const std::string& subcommand)
{
    return subcommand == "diff" || subcommand == "log" || subcommand == "show";
}

Result<Captured> run_git(const std::vector<std::string>& argv)
{
    auto run = run_captured(argv, {.stderr_to = CaptureOptions::Stderr::apart, .search_path = true});
    if (!run)
        return with_message(run.error(), "cannot run git (is it installed? apt install git): " + run.error().message);
    return run;
}

std::string trimmed(std::string text)
{
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    return text;
}

}  // namespace

std::vector<std::string> git_command_line(const std::filesystem::path& root, const std::vector<std::string>& args,
                                          const std::vector<std::string>& filter_overrides)
{
    std::vector<std::string> argv{"git", "-C", root.string()};
    argv.insert(argv.end(), no_execution().begin(), no_execution().end());
    argv.insert(argv.end(), filter_overrides.begin(), filter_overrides.end());
    if (args.empty())
        return argv;
    argv.push_back(args.front());
    if (is_diff_like(args.front())) {
        // diff.external and GIT_EXTERNAL_DIFF, diff.<driver>.command, diff.<driver>.textconv.
        argv.insert(argv.end(), {"--no-ext-diff", "--no-textconv"});
        // A submodule's dirty state is asked of a git run inside it, which reads the submodule's own
        // configuration, whose filter drivers this command line does not know: its commit alone counts.
        if (args.front() == "diff")
            argv.emplace_back("--ignore-submodules=dirty");
    }
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return argv;
}

Result<std::vector<std::string>> git_filter_overrides(std::string_view config_names)
{
    std::set<std::string> drivers;
    for (std::size_t start = 0; start < config_names.size();) {
        std::size_t end = config_names.find('\0', start);
        if (end == std::string_view::npos)
            end = config_names.size();
        const std::string_view name = config_names.substr(start, end - start);
        start = end + 1;
        // filter.<driver>.<variable>: the driver's name may itself hold dots.
        const std::size_t first = name.find('.'), last = name.rfind('.');
        if (first == std::string_view::npos || last <= first + 1)
            continue;  // filter.x without a subsection configures no driver
        drivers.emplace(name.substr(first + 1, last - first - 1));
    }
    std::vector<std::string> out;
    for (const std::string& d : drivers) {
        if (d.find('=') != std::string::npos || d.find('\n') != std::string::npos)
            return error(fmt::format("git's configuration names a filter driver \"{}\", whose name git's -c option "
                                     "cannot spell, so qk cannot keep git from running its programs: remove "
                                     "[filter \"{}\"] from the repository's .git/config (or ~/.gitconfig)",
                                     printable(d), printable(d)));
        for (const char* variable : {"clean=", "smudge=", "process="})
            out.insert(out.end(), {"-c", fmt::format("filter.{}.{}", d, variable)});
        out.insert(out.end(), {"-c", fmt::format("filter.{}.required=false", d)});
    }
    return out;
}

Result<std::string> git(const std::filesystem::path& root, const std::vector<std::string>& args)
{
    // The filter drivers configured now, read with `git config`, which runs nothing: a driver named in
    // .gitattributes runs its clean program on each file git hashes from the work tree (git diff does,
    // for a file whose stat changed), and no option turns filters off as a whole.
    QK_TRY(listed, run_git(git_command_line(root, {"config", "-z", "--name-only", "--get-regexp", "^filter\\."}, {})));
    // 1: no such variable.
    if (!listed->succeeded() && !(WIFEXITED(listed->wait_status) && WEXITSTATUS(listed->wait_status) == 1))
        return error(fmt::format("`git config --get-regexp ^filter\\.` failed: {}", trimmed(listed->err)));
    QK_TRY(filters, git_filter_overrides(listed->succeeded() ? listed->out : std::string()));
    QK_TRY(run, run_git(git_command_line(root, args, *filters)));
    if (!run->succeeded()) {
        std::string text = trimmed(run->err.empty() ? run->out : run->err);
        return error(fmt::format("`git {}` failed: {}", fmt::join(args, " "), text));
    }
    return std::move(run->out);
}

}  // namespace qk
