// qk's commands (qk_commands.hpp): each one's options, declared on the app, and what it runs once parsed.
// Moved out of qk_main.cpp as they were.
#include "qk_commands.hpp"

#include <string>
#include <vector>

#include "affected_command.hpp"
#include "doctor_command.hpp"
#include "report_check.hpp"
#include "report_command.hpp"
#include "report_fix.hpp"
#include "run_command.hpp"
#include "show_command.hpp"

namespace qk::cli {

namespace {


std::vector<std::string> split_commas(const std::vector<std::string>& items)
{
    std::vector<std::string> out;
    for (const std::string& item : items) {
        std::size_t start = 0;
        while (start <= item.size()) {
            std::size_t end = item.find(',', start);
            if (end == std::string::npos)
                end = item.size();
            if (end > start)
                out.push_back(item.substr(start, end - start));
            start = end + 1;
        }
    }
    return out;
}

void add_run_options(CLI::App& cmd, qk::cli::RunOptions& o)
{
    cmd.add_option("--parallel", o.parallel, "how many tasks run at once (default: the number of cores)")
        ->check(CLI::PositiveNumber);
    cmd.add_flag("--skip-cache,--skip-nx-cache", o.skip_cache, "run every task, restoring nothing from the cache");
    cmd.add_flag("--dry-run", o.dry_run, "print each task with its key's hash and run nothing");
    cmd.add_flag("--exclude-task-dependencies", o.exclude_task_dependencies,
                 "run only the tasks asked for, not what their dependsOn pulls in");
    cmd.add_flag("--sandbox", o.sandbox,
                 "record each task that runs and report what it did beyond its declarations (--sandbox=audit)");
    // --sandbox=MODE arrives here: main() splits it, so that a bare --sandbox never takes the next word.
    cmd.add_option("--sandbox-mode", o.sandbox_mode, "audit or enforce (written --sandbox=MODE)")->group("");
    cmd.add_option("--sandbox-report", o.sandbox_report, "write every finding of the sandbox as JSON to FILE");
    cmd.add_option("--recorder", o.recorder, "auto, ebpf or strace (default: $QK_RECORDER, else auto)");
    cmd.add_flag("--record", o.record,
                 "record each task with qk:ultracache and save what it read with its cached result, which a later "
                 "run checks before restoring it (QK_RECORD=audit: --record --sandbox)");
    cmd.add_option("--report", o.report, "write the run as JSON to FILE: each task's status, hash, where its "
                                         "result came from and why it ran, its audit");
    cmd.add_flag("--no-wait", o.no_wait, "fail at once when another qk run holds the workspace, instead of waiting");
    cmd.add_option("--remote-cache", o.remote_cache,
                   "read, readwrite or off: whether a local miss asks the remote cache (QK_REMOTE_CACHE_URL or nx.json's "
                   "qk.remoteCache) and a stored result is uploaded (default: readwrite when a server is named)")
        ->check(CLI::IsMember({"read", "readwrite", "off"}));
    cmd.add_option("--output-style", o.output_style,
                   "stream: each line as it comes, restored tasks' output replayed; static: each task's lines "
                   "together when it ends, restored tasks' replayed; dynamic: only failed tasks' output (default: "
                   "stream, without replaying restored tasks' output)")
        ->check(CLI::IsMember({"stream", "static", "dynamic"}));
    cmd.add_flag("-v,--verbose", o.verbose,
                 "under --sandbox, name the process behind each access the summary lists, with its parents up to "
                 "the task's command");
    cmd.add_option("-c,--configuration", o.configuration,
                   "the targets' configuration (a dependency that has one of that name uses it too)");
}

// Each command: its options, declared on the app, and what it runs once parsed. CLI11 keeps pointers to
// the fields, so a command stays where main made it.

struct RunManyCommand {
    CLI::App* cmd = nullptr;
    qk::cli::RunOptions options;
    std::vector<std::string> targets, projects, exclude;

    void declare(CLI::App& app)
    {
        cmd = app.add_subcommand("run-many", "run targets of many projects, in dependency order");
        cmd->add_option("-t,--targets,--target", targets, "the targets to run (comma-separated)")->required();
        cmd->add_option("-p,--projects", projects, "the projects (names, globs, tag:x; comma-separated; default: all)");
        cmd->add_option("--exclude", exclude,
                        "projects to leave out (names, globs, tag:x, root globs such as examples/**; comma-separated)");
        add_run_options(*cmd, options);
    }
    int run(const std::string& directory)
    {
        options.targets = split_commas(targets);
        options.projects = split_commas(projects);
        options.exclude = split_commas(exclude);
        options.directory = directory;
        return qk::cli::run_tasks(options);
    }
};

struct AffectedCommand {
    CLI::App* cmd = nullptr;
    qk::cli::AffectedOptions options;
    std::vector<std::string> targets, exclude, files;
    std::string head;

    void declare(CLI::App& app)
    {
        cmd = app.add_subcommand("affected", "run targets of the projects a git change touches, and their dependents");
        cmd->add_option("-t,--targets,--target", targets, "the targets to run (comma-separated)")->required();
        cmd->add_option("--base", options.base, "the base of the change (default: nx.json's defaultBase, else main)");
        cmd->add_option("--head", head,
                        "the change's last commit (default: the working tree, untracked files included)");
        cmd->add_option("--files", files, "the changed files (comma-separated), instead of asking git");
        cmd->add_option("--exclude", exclude, "projects to leave out (names, globs, tag:x, root globs)");
        add_run_options(*cmd, options.run);
    }
    int run(const std::string& directory)
    {
        options.run.targets = split_commas(targets);
        options.run.exclude = split_commas(exclude);
        options.files = split_commas(files);
        if (!head.empty())
            options.head = head;
        options.run.directory = directory;
        return qk::cli::run_affected(options);
    }
};

struct RunCommand {
    CLI::App* cmd = nullptr;
    qk::cli::RunOptions options;
    std::string task_id;

    void declare(CLI::App& app)
    {
        cmd = app.add_subcommand("run", "run one task, project:target, after what it depends on");
        cmd->add_option("task", task_id, "project:target[:configuration]; a target's name may hold colons")->required();
        add_run_options(*cmd, options);
    }
    int run(const std::string& directory)
    {
        options.task = task_id;  // read against the workspace: targets may hold colons
        options.single_task = true;
        options.directory = directory;
        return qk::cli::run_tasks(options);
    }
};

struct ShowCommand {
    qk::cli::ShowOptions options;
    CLI::App* projects = nullptr;
    CLI::App* project = nullptr;
    CLI::App* task = nullptr;

    void declare(CLI::App& app)
    {
        CLI::App* sh =
            app.add_subcommand("show", "show the workspace's projects, a project, or a task's inputs and key");
        sh->require_subcommand(1);
        projects = sh->add_subcommand("projects", "list the projects");
        project = sh->add_subcommand("project", "show a project's configuration and targets");
        project->add_option("project", options.name, "the project")->required();
        task = sh->add_subcommand("task", "show a task's inputs, the files they match, outputs and key");
        task->add_option("task", options.name, "project:target")->required();
        task->add_flag("--rules", options.rules, "show what the sandbox lets the task read and write, and why");
        for (CLI::App* c : {projects, project, task})
            c->add_flag("--json", options.json, "print JSON");
    }
    int run(const std::string& directory)
    {
        options.directory = directory;
        options.what = task->parsed()      ? qk::cli::ShowOptions::What::task
                       : project->parsed() ? qk::cli::ShowOptions::What::project
                                           : qk::cli::ShowOptions::What::projects;
        return qk::cli::run_show(options);
    }
};

struct DoctorCommand {
    CLI::App* cmd = nullptr;
    qk::cli::DoctorOptions options;
    bool sandbox = false;  // names the default (audit): accepted, nothing to keep

    void declare(CLI::App& app)
    {
        cmd = app.add_subcommand("doctor", "show what the sandbox can use on this machine, and how to fix what fails");
        cmd->add_flag("--sandbox", sandbox, "exit non-zero unless audit works here (the default)");
        cmd->add_option("--sandbox-mode", options.mode, "audit or enforce (written --sandbox=MODE)")->group("");
    }
    int run(const std::string& directory)
    {
        options.directory = directory;
        return qk::cli::run_doctor(options);
    }
};

struct ReportCommands {
    qk::cli::ReportOptions report;
    qk::cli::ReportCheckOptions check;
    qk::cli::ReportFixOptions fix;
    CLI::App* merge = nullptr;
    CLI::App* html = nullptr;
    CLI::App* checking = nullptr;
    CLI::App* fixing = nullptr;

    void declare(CLI::App& app)
    {
        CLI::App* rp = app.add_subcommand("report", "merge the reports of one run's shards, or write one as a page");
        rp->require_subcommand(1);
        merge = rp->add_subcommand("merge",
                                   "merge the reports of one run's shards (--sandbox-report or --report) into one");
        merge->add_option("reports", report.inputs, "the shards' reports")->required()->check(CLI::ExistingFile);
        merge->add_option("-o,--output", report.output, "where to write the merged report (default: stdout)");
        html =
            rp->add_subcommand("html", "write a --sandbox-report (several: merged first) as one self-contained page");
        html->add_option("reports", report.inputs, "the report, or the shards' reports")
            ->required()
            ->check(CLI::ExistingFile);
        html->add_option("-o,--output", report.output, "the page to write, such as report.html")->required();
        checking = rp->add_subcommand("check", "re-judge a --sandbox-report's findings against today's declarations, "
                                               "running nothing; exit 1 while any remain");
        checking->add_option("report", check.report, "the --sandbox-report to check")
            ->required()
            ->check(CLI::ExistingFile);
        checking->add_flag("--json", check.json, "print the verdict as JSON: per task ok, stillUnexpected, nowCovered");
        checking->add_flag("-v,--verbose", check.verbose,
                           "under each access still unexpected, the process the report names behind it");
        fixing = rp->add_subcommand("fix", "print the edits to project.json that a --sandbox-report's suggestions "
                                           "amount to, as a unified diff; --write applies them");
        fixing->add_option("report", fix.report, "the --sandbox-report")->required()->check(CLI::ExistingFile);
        fixing->add_flag("--write", fix.write,
                         "write the edits, keeping each file's formatting, key order and comments");
        fixing->add_flag("--declare-network", fix.declare_network,
                         "also give each target that declares no network the list of hosts its tasks reached "
                         "(\"qk:sandbox\": {\"network\": [...]}), which enforce then holds it to");
    }
    bool parsed() const { return merge->parsed() || html->parsed() || checking->parsed() || fixing->parsed(); }
    int run(const std::string& directory)
    {
        if (merge->parsed())
            return qk::cli::run_report_merge(report);
        if (html->parsed())
            return qk::cli::run_report_html(report);
        if (fixing->parsed()) {
            fix.directory = directory;
            return qk::cli::run_report_fix(fix);
        }
        check.directory = directory;
        return qk::cli::run_report_check(check);
    }
};

}  // namespace

struct Commands::Parts {
    std::string directory = ".";
    RunManyCommand run_many;
    AffectedCommand affected;
    RunCommand run_one;
    ShowCommand show;
    DoctorCommand doctor;
    ReportCommands report;

    void declare(CLI::App& app)
    {
        app.add_option("-C", directory, "run as if started in DIR");
        run_many.declare(app);
        affected.declare(app);
        run_one.declare(app);
        show.declare(app);
        doctor.declare(app);
        report.declare(app);
    }
    // The one command parsed (show when no other is: CLI11 requires one).
    int run()
    {
        if (run_many.cmd->parsed())
            return run_many.run(directory);
        if (affected.cmd->parsed())
            return affected.run(directory);
        if (run_one.cmd->parsed())
            return run_one.run(directory);
        if (report.parsed())
            return report.run(directory);
        if (doctor.cmd->parsed())
            return doctor.run(directory);
        return show.run(directory);
    }
};

Commands::Commands(CLI::App& app) : parts_(std::make_unique<Parts>()) { parts_->declare(app); }

Commands::~Commands() = default;

int Commands::run() { return parts_->run(); }

}  // namespace qk::cli
