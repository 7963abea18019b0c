#include "task_env.hpp"

#include <unistd.h>

#include "dotenv.hpp"

extern char** environ;

namespace qk::run {

namespace fs = std::filesystem;

namespace {

// Where a workspace-relative or absolute path of the configuration lands.
fs::path against_root(const fs::path& root, const std::string& path)
{
    fs::path p = path.empty() || path == "." ? root : (fs::path(path).is_absolute() ? fs::path(path) : root / path);
    p = p.lexically_normal();
    std::string s = p.string();
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

}  // namespace

Environment::Environment(const std::vector<std::string>& entries)
{
    for (const auto& kv : entries) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            continue;  // not a variable; execve would pass it on, but nothing can read it
        if (!get(std::string_view(kv).substr(0, eq)))
            entries_.push_back(kv);
    }
}

std::optional<std::string_view> Environment::get(std::string_view name) const
{
    for (const auto& kv : entries_)
        if (kv.size() > name.size() && kv[name.size()] == '=' && kv.compare(0, name.size(), name) == 0)
            return std::string_view(kv).substr(name.size() + 1);
    return std::nullopt;
}

void Environment::set(std::string_view name, std::string_view value)
{
    std::string entry;
    entry.reserve(name.size() + 1 + value.size());
    entry.append(name).append("=").append(value);
    for (auto& kv : entries_)
        if (kv.size() > name.size() && kv[name.size()] == '=' && kv.compare(0, name.size(), name) == 0) {
            kv = std::move(entry);
            return;
        }
    entries_.push_back(std::move(entry));
}

std::vector<std::string> current_environment()
{
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e)
        if (!std::string_view(*e).starts_with("QK_REMOTE_CACHE_"))
            out.emplace_back(*e);
    return out;
}

fs::path task_directory(const workspace::RunSpec& run, const TaskContext& task)
{
    return against_root(task.root, run.cwd);
}

Result<Environment> task_environment(const workspace::RunSpec& run, const TaskContext& task)
{
    Environment env(task.environment);
    env.set("NX_TASK_TARGET_PROJECT", task.project);
    env.set("NX_TASK_TARGET_TARGET", task.target);
    if (!task.configuration.empty())
        env.set("NX_TASK_TARGET_CONFIGURATION", task.configuration);
    env.set("QK_TASK", task.id());
    for (const auto& [k, v] : task.extra_env)
        env.set(k, v);

    std::string path;
    for (const auto& dir : run.path_prepend)
        path += against_root(task.root, dir).string() + ":";
    std::optional<std::string_view> old_path = env.get("PATH");
    // With no PATH at all the shell would find nothing but the prepended directories.
    path += old_path && !old_path->empty() ? std::string(*old_path) : std::string("/usr/local/bin:/usr/bin:/bin");
    env.set("PATH", path);

    if (!run.env_file.empty()) {
        Result<std::vector<DotenvEntry>> entries = read_dotenv(against_root(task.root, run.env_file), run.env_file);
        if (!entries)
            return with_message(entries.error(), task.id() + ": " + entries.error().message);
        // dotenv-expand looks a name up in the environment first, then in the file's earlier values.
        std::vector<std::pair<std::string, std::string>> seen;
        auto lookup = [&](std::string_view name) -> std::optional<std::string> {
            if (auto v = env.get(name))
                return std::string(*v);
            for (const auto& [k, v] : seen)
                if (k == name)
                    return v;
            return std::nullopt;
        };
        for (const auto& e : *entries) {
            std::string value = e.literal ? e.value : expand_dotenv_value(e.value, lookup);
            seen.emplace_back(e.name, value);
        }
        for (const auto& [k, v] : seen)
            if (!env.get(k))
                env.set(k, v);
    }

    for (const auto& [k, v] : run.env)
        if (k != "PATH")
            env.set(k, v);
    return env;
}

}  // namespace qk::run
