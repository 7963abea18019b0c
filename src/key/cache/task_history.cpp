#include "qk/key/task_history.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"

namespace qk::key {

std::vector<KeyPart> key_parts(const TaskKey& key, const FileIndex& files)
{
    std::vector<KeyPart> out;
    out.push_back({"command", "", key.command_hash});
    for (const KeyGroup& g : key.groups)
        if (g.files)
            for (std::uint32_t f : *g.files)
                out.push_back({"input", files.files()[f], files.hash_of(f)});
    for (const KeyFile& f : key.always)
        out.push_back({"input", f.path, f.hash});
    for (const KeyEffectFile& f : key.effect_files)
        out.push_back({"file", f.path + " (" + f.what + ")", f.hash});
    for (const KeyJsonFile& f : key.json_files)
        out.push_back({"file", f.path + " (the fields it selects)", f.hash});
    for (const auto& [name, hash] : key.env)
        out.push_back({"env", name, hash});
    for (const auto& [command, hash] : key.runtime)
        out.push_back({"runtime", command, hash});
    if (key.packages.source != KeyPackages::Source::none)
        out.push_back({"packages", "", key.packages.hash});
    for (const auto& [id, hash] : key.dependency_tasks)
        out.push_back({"dependency", id, hash});
    for (const KeyFile& f : key.dependency_outputs)
        out.push_back({"dependencyOutput", f.path, f.hash});
    for (const auto& tree : key.linked_trees)
        out.push_back({"input", tree->link + "/", tree->hash});
    for (const auto& [input, digest] : key.dependency_inputs)
        out.push_back({"dependencyInput", input, digest});
    std::sort(out.begin(), out.end(), [](const KeyPart& a, const KeyPart& b) {
        return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
    });
    // A file two groups select is one input.
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

std::string phrase(const KeyPart& p, const char* how)
{
    if (p.kind == "command")
        return fmt::format("its command changed");
    if (p.kind == "packages")
        return fmt::format("the installed packages its key counts {}", how);
    if (p.kind == "env")
        return fmt::format("environment variable {} {}", p.name, how);
    if (p.kind == "runtime")
        return fmt::format("the output of `{}` {}", p.name, how);
    if (p.kind == "dependency")
        return fmt::format("the task it depends on, {}, {}", p.name, how);
    if (p.kind == "dependencyInput")
        return fmt::format("what ^{} holds in the projects it depends on {}", p.name, how);
    if (p.kind == "dependencyOutput")
        return fmt::format("its dependency's output {} {}", p.name, how);
    return fmt::format("{} {} {}", p.kind, p.name, how);
}

}  // namespace

std::optional<std::string> first_difference(const std::vector<KeyPart>& before, const std::vector<KeyPart>& now)
{
    auto order = [](const KeyPart& a, const KeyPart& b) { return std::tie(a.kind, a.name) < std::tie(b.kind, b.name); };
    auto b = before.begin(), n = now.begin();
    while (b != before.end() || n != now.end()) {
        if (n == now.end() || (b != before.end() && order(*b, *n)))
            return phrase(*b, b->kind == "command" ? "changed" : "is no longer among them");
        if (b == before.end() || order(*n, *b))
            return phrase(*n, n->kind == "input" || n->kind == "file" ? "is new" : "changed");
        if (b->hash != n->hash)
            return phrase(*n, "changed");
        ++b, ++n;
    }
    return std::nullopt;
}

TaskHistory TaskHistory::open(const std::filesystem::path& cache_dir)
{
    return TaskHistory(cache_dir / "tasks");
}

std::filesystem::path TaskHistory::file(const std::string& task) const
{
    // Task ids hold ':' and '/' (scoped packages): named by their hash.
    return dir_ / (hash_bytes(task).hex() + ".txt");
}

// One part per line: kind, tab, hash, tab, name (a name may hold anything but a newline).
std::optional<std::vector<KeyPart>> TaskHistory::last(const std::string& task) const
{
    auto text = read_file(file(task).string());
    if (!text)
        return std::nullopt;
    std::vector<KeyPart> out;
    std::string_view rest = *text;
    if (!rest.starts_with("qk task key 1\t" + task + "\n"))
        return std::nullopt;
    rest.remove_prefix(rest.find('\n') + 1);
    while (!rest.empty()) {
        auto end = rest.find('\n');
        if (end == std::string_view::npos)
            return std::nullopt;
        std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        auto t1 = line.find('\t');
        auto t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
        if (t2 == std::string_view::npos)
            return std::nullopt;
        auto hash = parse_hash(line.substr(t1 + 1, t2 - t1 - 1));
        if (!hash)
            return std::nullopt;
        out.push_back({std::string(line.substr(0, t1)), std::string(line.substr(t2 + 1)), *hash});
    }
    return out;
}

Status TaskHistory::remember(const std::string& task, const std::vector<KeyPart>& parts)
{
    std::string text = "qk task key 1\t" + task + "\n";
    for (const KeyPart& p : parts) {
        if (p.name.find('\n') != std::string::npos)
            continue;  // a path with a newline cannot be told apart; it is only a hint
        text += fmt::format("{}\t{}\t{}\n", p.kind, p.hash.hex(), p.name);
    }
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec)
        return error(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
    return write_file_atomically(file(task).string(), text, {.durable = false});
}

}  // namespace qk::key
