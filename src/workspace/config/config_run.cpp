// How a target runs, recorded so the runner can run it later without reading configuration again.
//
// nx:run-commands (nx/src/executors/run-commands/run-commands.impl.ts): `command` (a string, or an
// array joined with spaces) runs alone, not in parallel; `commands` (strings or {command,
// forwardAllArgs}) run in parallel unless `parallel: false`. cwd is the workspace root unless set,
// relative to the root. Options the executor does not know are passed to each command as --key=value
// (forwardAllArgs, default true), then `args`; "{args.x}" in a command takes option x instead. PATH
// gets node_modules/.bin of cwd and each parent (npm-run-path).
//
// nx:run-script runs a package.json script as `pnpm run` does: in the project's directory, with the
// project's node_modules/.bin and then the workspace root's on PATH, pre<name> and post<name> around it
// (pnpm 9 enables pre/post scripts by default).
#include <set>

#include <fmt/format.h>

#include "config_loader.hpp"
#include "qk/workspace/tokens.hpp"

namespace qk::workspace::detail {

namespace fs = std::filesystem;

namespace {

const std::set<std::string_view> kRunCommandsKeys = {
    "command", "commands", "color",   "no-color",       "parallel", "no-parallel", "readyWhen", "cwd", "args",
    "envFile", "__unparsed__", "env", "usePty", "streamOutput", "verbose", "forwardAllArgs", "tty",
};

// JavaScript's String(value) for what can be forwarded.
std::string js_string(const Json& v)
{
    if (v.is_string())
        return v.as_string();
    if (v.is_bool())
        return v.as_bool() ? "true" : "false";
    return v.dump();
}

// Nx's wrapArgIntoQuotesIfNeeded.
std::string quote_if_needed(const std::string& arg)
{
    auto eq = arg.find('=');
    if (eq != std::string::npos) {
        std::string key = arg.substr(0, eq);
        std::string value = arg.substr(eq + 1);
        auto next_eq = value.find('=');  // JavaScript's split('=') keeps only the first two parts
        if (next_eq != std::string::npos)
            value = value.substr(0, next_eq);
        if (key.rfind("--", 0) == 0 && value.find(' ') != std::string::npos && !value.empty() && value[0] != '\'' &&
            value[0] != '"')
            return fmt::format("{}=\"{}\"", key, value);
        return arg;
    }
    if (arg.find(' ') != std::string::npos && arg[0] != '\'' && arg[0] != '"')
        return fmt::format("\"{}\"", arg);
    return arg;
}

std::string interpolate_args(const std::string& command, const Json& options, bool forward_all)
{
    if (command.find("{args.") != std::string::npos) {
        std::string out;
        std::size_t i = 0;
        while (i < command.size()) {
            auto at = command.find("{args.", i);
            auto close = at == std::string::npos ? at : command.find('}', at);
            if (close == std::string::npos) {
                out += command.substr(i);
                break;
            }
            out += command.substr(i, at - i);
            std::string name = command.substr(at + 6, close - at - 6);
            const Json* v = options.find(name);
            if (v && !kRunCommandsKeys.count(name))
                out += js_string(*v);
            i = close + 1;
        }
        return out;
    }
    if (!forward_all)
        return command;
    std::string args;
    for (const auto& [k, v] : options.as_object()) {
        if (kRunCommandsKeys.count(k) || v.is_object() || v.is_array())
            continue;
        args += " " + quote_if_needed(fmt::format("--{}={}", k, js_string(v)));
    }
    if (const Json* a = options.find("args")) {
        std::string text;
        if (a->is_array()) {
            for (const auto& part : a->as_array())
                text += (text.empty() ? "" : " ") + js_string(part);
        } else {
            text = js_string(*a);
        }
        if (!text.empty())
            args += " " + text;
    }
    return command + args;
}

// node_modules/.bin of `dir` and of each parent up to the root, workspace-relative.
std::vector<std::string> bin_dirs_up(const std::string& dir)
{
    std::vector<std::string> out;
    if (!dir.empty() && (dir[0] == '/' || dir == ".." || dir.rfind("../", 0) == 0)) {  // outside the workspace
        out.push_back(dir + "/node_modules/.bin");
        return out;
    }
    fs::path p = dir == "." ? fs::path() : fs::path(dir);
    for (;;) {
        out.push_back(p.empty() ? "node_modules/.bin" : (p / "node_modules/.bin").generic_string());
        if (p.empty())
            break;
        p = p.parent_path();
    }
    return out;
}

void run_commands(RunSpec& run, const Target& target, const Project& project)
{
    const Json& o = target.options;
    if (const Json* cwd = o.find("cwd"); cwd && cwd->is_string() && !cwd->as_string().empty()) {
        // A directory inside the workspace, as a plain relative path ("a/../b" is "b": a directory, not a
        // glob). Nx also takes an absolute path, or one that climbs out; qk refuses both: what a task
        // writes relative to its directory would land outside the workspace, unseen by its outputs.
        const std::string& written = cwd->as_string();
        if (auto inside = relative_path(written, true)) {
            run.cwd = inside->empty() ? std::string(1, '.') : *inside;
        } else {
            const std::string where = target.configured_in();
            run.problem = fmt::format("its options.cwd \"{}\" {} (options.cwd{}); give a directory inside the "
                                      "workspace, relative to its root, such as \"{}\" or \"{{projectRoot}}\"",
                                      written, written.starts_with('/') ? "is an absolute path" : "leads outside the workspace",
                                      where.empty() ? "" : " in " + where, project.root);
        }
    }
    bool forward_all = true;
    if (const Json* f = o.find("forwardAllArgs"); f && f->is_bool())
        forward_all = f->as_bool();
    if (const Json* c = o.find("command"); c && c->truthy()) {
        std::string text;
        if (c->is_array()) {
            for (const auto& part : c->as_array())
                text += (text.empty() ? "" : " ") + js_string(part);
        } else {
            text = js_string(*c);
        }
        run.commands.push_back(interpolate_args(text, o, forward_all));
        run.parallel = o.find("readyWhen") != nullptr;
    } else if (const Json* cs = o.find("commands"); cs && cs->is_array() && !cs->as_array().empty()) {
        for (const auto& c : cs->as_array()) {
            if (c.is_string()) {
                run.commands.push_back(interpolate_args(c.as_string(), o, forward_all));
            } else if (const Json* text = c.is_object() ? c.find("command") : nullptr; text && text->is_string()) {
                bool fwd = forward_all;
                if (const Json* f = c.find("forwardAllArgs"); f && f->is_bool())
                    fwd = f->as_bool();
                run.commands.push_back(interpolate_args(text->as_string(), o, fwd));
            } else {
                run.problem = "each entry of its options.commands must be a string or {\"command\": \"...\"}";
            }
        }
        const Json* par = o.find("parallel");
        run.parallel = !(par && par->is_bool() && !par->as_bool());
    } else if (run.problem.empty()) {
        run.problem = "nx:run-commands needs options.command or options.commands";
    }
    if (const Json* env = o.find("env"); env && env->is_object())
        for (const auto& [k, v] : env->as_object())
            run.env.emplace_back(k, js_string(v));
    if (const Json* ef = o.find("envFile"); ef && ef->is_string())
        run.env_file = ef->as_string();
    run.path_prepend = bin_dirs_up(run.cwd);
}

void run_script(RunSpec& run, const Target& target, const Project& project)
{
    const Json* name = target.options.find("script");
    run.script = name && name->is_string() ? name->as_string() : target.name;
    run.cwd = project.root;
    run.path_prepend.push_back(project.root == "." ? "node_modules/.bin" : project.root + "/node_modules/.bin");
    if (project.root != ".")
        run.path_prepend.push_back("node_modules/.bin");
    const Json* scripts = project.package_manifest.find("scripts");
    const Json* main = scripts ? scripts->find(run.script) : nullptr;
    if (!main || !main->is_string()) {
        run.problem = fmt::format("{} has no script \"{}\"",
                                  project.package_json.empty() ? project.root + "/package.json" : project.package_json,
                                  run.script);
        return;
    }
    for (const std::string& event : {"pre" + run.script, run.script, "post" + run.script}) {
        const Json* s = scripts->find(event);
        if (s && s->is_string()) {
            run.commands.push_back(s->as_string());
            run.lifecycle_events.push_back(event);
        }
    }
}

}  // namespace

RunSpec make_run_spec(const Target& target, const Project& project)
{
    RunSpec run;
    run.executor = target.executor;
    if (target.executor == "nx:run-commands") {
        run.kind = RunSpec::Kind::commands;
        run_commands(run, target, project);
    } else if (target.executor == "nx:run-script") {
        run.kind = RunSpec::Kind::script;
        run_script(run, target, project);
    } else if (target.executor == "nx:noop") {
        run.kind = RunSpec::Kind::noop;
    } else {
        run.kind = RunSpec::Kind::unsupported;
        run.problem = fmt::format("qk cannot run the executor \"{}\"; give the target a \"command\" "
                                  "(nx:run-commands) or make it a package.json script",
                                  target.executor);
    }
    return run;
}

}  // namespace qk::workspace::detail
