#include "qk/workspace/task_address.hpp"

#include <vector>

#include <fmt/format.h>

namespace qk::workspace {
namespace {

std::string join(const std::vector<std::string_view>& parts, std::size_t from, std::size_t to)
{
    std::string out;
    for (std::size_t i = from; i < to; ++i) {
        if (i > from)
            out += ':';
        out += parts[i];
    }
    return out;
}

}  // namespace

Result<TaskAddress> parse_task_address(std::string_view text, const Workspace& ws, std::string_view command)
{
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        std::size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
        if (colon == std::string_view::npos)
            break;
        start = colon + 1;
    }
    auto bad = [&] {
        return error(fmt::format("{}\"{}\" is not a task; write it as project:target (or project:target:configuration)",
                                 command.empty() ? "" : std::string(command) + ": ", text));
    };
    if (parts.size() < 2)
        return bad();
    for (auto p : parts)
        if (p.empty())
            return bad();

    // The project is the first segment, unless only a longer run of segments names one.
    std::size_t project_end = 1;
    if (!ws.find_project(parts[0]))
        for (std::size_t end = 2; end < parts.size(); ++end)
            if (ws.find_project(join(parts, 0, end))) {
                project_end = end;
                break;
            }
    TaskAddress a;
    a.project = join(parts, 0, project_end);
    QK_TRY(project, ws.project(a.project));

    // The longest run of segments that names a target; the rest is the configuration.
    std::size_t target_end = parts.size();
    for (; target_end > project_end; --target_end)
        if ((*project)->find_target(join(parts, project_end, target_end)))
            break;
    if (target_end == project_end)
        target_end = parts.size();  // no target: the graph names the project's targets
    a.target = join(parts, project_end, target_end);
    a.configuration = join(parts, target_end, parts.size());

    // Read the other way: a shorter target with the rest as a configuration it has.
    for (std::size_t end = target_end - 1; end > project_end; --end) {
        const Target* shorter = (*project)->find_target(join(parts, project_end, end));
        std::string rest = join(parts, end, parts.size());
        if (shorter && shorter->configurations.find(rest)) {
            a.ambiguity = fmt::format("\"{}\" is read as target \"{}\"{}; for target \"{}\" with its configuration \"{}\", "
                                      "write {}:{} -c {}",
                                      text, a.target,
                                      a.configuration.empty() ? "" : fmt::format(" with configuration \"{}\"", a.configuration),
                                      shorter->name, rest, a.project, shorter->name, rest);
            break;
        }
    }
    return a;
}

}  // namespace qk::workspace
