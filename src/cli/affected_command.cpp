#include "affected_command.hpp"

#include <cstdio>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/key/session.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/result.hpp"
#include "affected.hpp"

namespace qk::cli {

int run_affected(const AffectedOptions& o)
{
    // Before git runs: it is not to inherit the remote cache's secrets either.
    Settings settings = read_run_settings();
    auto session = or_fatal(key::Session::open(o.run.directory));
    workspace::TaskRequest request;
    request.targets = o.run.targets;
    request.exclude = o.run.exclude;
    or_fatal(session->plan(request));

    std::vector<std::string> changed;
    if (!o.files.empty()) {
        for (std::string f : o.files) {
            while (f.starts_with("./"))
                f.erase(0, 2);
            changed.push_back(f);
        }
    } else {
        const workspace::Json* nx_base = session->workspace().nx().raw.find("defaultBase");
        std::string base = or_fatal(affected_base(session->workspace().root(), o.base,
                                                  nx_base && nx_base->is_string() ? nx_base->as_string() : ""));
        changed = or_fatal(changed_files(session->workspace().root(), base, o.head));
    }
    auto affected = or_fatal(affected_projects(*session, changed));

    // Only those with a requested target: run-many refuses a project named outright that has none.
    std::vector<std::string> projects;
    for (const std::string& name : affected) {
        const workspace::Project* p = session->workspace().find_project(name);
        for (const std::string& t : o.run.targets)
            if (p && p->find_target(t)) {
                projects.push_back(name);
                break;
            }
    }
    std::printf("qk affected: %zu changed file%s; affected: %s\n", changed.size(), changed.size() == 1 ? "" : "s",
                affected.empty() ? "none" : printable_join(affected, ", ").c_str());
    if (std::fflush(stdout) != 0)  // before the tasks' own output
        throw FatalError(sys_error("cannot write to standard output"));
    if (projects.empty()) {
        std::printf("qk affected: no affected project has target %s: nothing to run\n",
                    printable_join(o.run.targets, ",").c_str());
        return 0;
    }
    RunOptions run = o.run;
    run.projects = projects;
    return run_tasks(run, std::move(settings));
}

}  // namespace qk::cli
