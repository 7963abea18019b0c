// Shape checks of configuration files (see config_validate.hpp).
#include "config_validate.hpp"

#include <fmt/format.h>

namespace qk::workspace::detail {
namespace {

std::string join_path(std::string_view base, std::string_view key)
{
    if (base.empty())
        return std::string(key);
    return fmt::format("{}.{}", base, key);
}

Status expect_kind(const Json* v, Json::Kind kind, std::string_view file, std::string_view path,
                   std::string_view expected)
{
    if (v && v->kind() != kind)
        return shape_error(file, *v, path, expected);
    return {};
}

Status validate_inputs_array(const Json& v, std::string_view file, std::string_view path)
{
    if (!v.is_array())
        return shape_error(file, v, path, "an array of inputs");
    std::size_t i = 0;
    for (const auto& item : v.as_array()) {
        if (!item.is_string() && !item.is_object())
            return shape_error(file, item, fmt::format("{}[{}]", path, i), "a string or an object");
        ++i;
    }
    return {};
}

Status validate_depends_on(const Json& v, std::string_view file, std::string_view path)
{
    if (!v.is_array())
        return shape_error(file, v, path, "an array");
    std::size_t i = 0;
    for (const auto& entry : v.as_array()) {
        std::string p = fmt::format("{}[{}]", path, i++);
        if (entry.is_string())
            continue;
        if (!entry.is_object())
            return shape_error(file, entry, p, "a string (\"build\", \"^build\", \"project:build\") or an object");
        const Json* target = entry.find("target");
        if (!target)
            return shape_error(file, entry, p, "an object with a \"target\"");
        if (!target->is_string())
            return shape_error(file, *target, p + ".target", "a string");
        if (const Json* projects = entry.find("projects"); projects && !projects->is_string()) {
            if (auto s = validate_string_array(*projects, file, p + ".projects"); !s)
                return shape_error(file, *projects, p + ".projects", "a string or an array of strings");
        }
        if (auto s = expect_kind(entry.find("dependencies"), Json::Kind::boolean, file, p + ".dependencies",
                                 "true or false");
            !s)
            return s;
        QK_TRY_STATUS(expect_kind(entry.find("inputs"), Json::Kind::boolean, file, p + ".inputs", "true or false"));
        for (const char* key : {"params", "options"}) {
            const Json* m = entry.find(key);
            if (m && !(m->is_string() && (m->as_string() == "ignore" || m->as_string() == "forward")))
                return shape_error(file, *m, fmt::format("{}.{}", p, key), "\"ignore\" or \"forward\"");
        }
    }
    return {};
}

}  // namespace

Error shape_error(std::string_view file, const Json& value, std::string_view path, std::string_view expected)
{
    std::string found = value.describe();
    if (value.is_string())
        found = fmt::format("the string \"{}\"", value.as_string());
    else if (value.is_bool())
        found = value.as_bool() ? "true" : "false";
    return error(fmt::format("{}:{}:{}: {} must be {}, found {}", file, value.line(), value.column(), path, expected,
                             found));
}

Status validate_string_array(const Json& value, std::string_view file, std::string_view path)
{
    if (!value.is_array())
        return shape_error(file, value, path, "an array of strings");
    std::size_t i = 0;
    for (const auto& item : value.as_array()) {
        if (!item.is_string())
            return shape_error(file, item, fmt::format("{}[{}]", path, i), "a string");
        ++i;
    }
    return {};
}

Status validate_target(const Json& t, std::string_view file, std::string_view path)
{
    if (!t.is_object())
        return shape_error(file, t, path, "an object");
    auto p = [&](std::string_view key) { return join_path(path, key); };
    QK_TRY_STATUS(expect_kind(t.find("executor"), Json::Kind::string, file, p("executor"), "a string"));
    if (const Json* c = t.find("command"); c && !c->is_string()) {
        if (!validate_string_array(*c, file, p("command")))
            return shape_error(file, *c, p("command"), "a string or an array of strings");
    }
    QK_TRY_STATUS(expect_kind(t.find("options"), Json::Kind::object, file, p("options"), "an object"));
    if (const Json* cfgs = t.find("configurations")) {
        if (!cfgs->is_object())
            return shape_error(file, *cfgs, p("configurations"), "an object");
        for (const auto& [name, cfg] : cfgs->as_object())
            if (!cfg.is_object())
                return shape_error(file, cfg, p("configurations." + name), "an object");
    }
    if (auto s = expect_kind(t.find("defaultConfiguration"), Json::Kind::string, file, p("defaultConfiguration"),
                             "a string");
        !s)
        return s;
    if (const Json* d = t.find("dependsOn"))
        QK_TRY_STATUS(validate_depends_on(*d, file, p("dependsOn")));
    if (const Json* in = t.find("inputs"))
        QK_TRY_STATUS(validate_inputs_array(*in, file, p("inputs")));
    if (const Json* out = t.find("outputs"))
        QK_TRY_STATUS(validate_string_array(*out, file, p("outputs")));
    for (const char* key : {"cache", "continuous", "parallelism"})
        QK_TRY_STATUS(expect_kind(t.find(key), Json::Kind::boolean, file, p(key), "true or false"));
    if (const Json* sb = t.find("qk:sandbox")) {
        if (sb->is_object()) {
            if (const Json* scratch = sb->find("scratch"))
                QK_TRY_STATUS(validate_string_array(*scratch, file, p("qk:sandbox.scratch")));
            if (const Json* network = sb->find("network"))
                QK_TRY_STATUS(validate_network(*network, file, p("qk:sandbox.network")));
        } else if (!sb->is_bool()) {
            return shape_error(file, *sb, p("qk:sandbox"),
                               "false, true or an object { \"scratch\": [...], \"network\": ... }");
        }
    }
    if (const Json* uc = t.find("qk:ultracache")) {
        if (!uc->is_object())
            return shape_error(file, *uc, p("qk:ultracache"), "an object { \"ignoreReads\": [...] }");
        if (const Json* ir = uc->find("ignoreReads"))
            QK_TRY_STATUS(validate_string_array(*ir, file, p("qk:ultracache.ignoreReads")));
    }
    if (const Json* warm = t.find("qk:warm"))
        QK_TRY_STATUS(validate_string_array(*warm, file, p("qk:warm")));
    return {};
}

Status validate_project_layer(const Json& project, std::string_view file, std::string_view path)
{
    if (!project.is_object())
        return shape_error(file, project, path.empty() ? "the file's top level" : path, "an object");
    auto p = [&](std::string_view key) { return join_path(path, key); };
    QK_TRY_STATUS(expect_kind(project.find("name"), Json::Kind::string, file, p("name"), "a string"));
    for (const char* key : {"tags", "implicitDependencies"})
        if (const Json* v = project.find(key))
            QK_TRY_STATUS(validate_string_array(*v, file, p(key)));
    if (const Json* named = project.find("namedInputs")) {
        if (!named->is_object())
            return shape_error(file, *named, p("namedInputs"), "an object");
        for (const auto& [name, def] : named->as_object())
            QK_TRY_STATUS(validate_inputs_array(def, file, p("namedInputs." + name)));
    }
    if (const Json* targets = project.find("targets")) {
        if (!targets->is_object())
            return shape_error(file, *targets, p("targets"), "an object");
        for (const auto& [name, t] : targets->as_object())
            QK_TRY_STATUS(validate_target(t, file, p("targets." + name)));
    }
    return {};
}

Status validate_nx_json(const Json& nx, std::string_view file)
{
    if (!nx.is_object())
        return shape_error(file, nx, "the file's top level", "an object");
    QK_TRY_STATUS(expect_kind(nx.find("extends"), Json::Kind::string, file, "extends", "a string"));
    if (const Json* named = nx.find("namedInputs")) {
        if (!named->is_object())
            return shape_error(file, *named, "namedInputs", "an object");
        for (const auto& [name, def] : named->as_object())
            QK_TRY_STATUS(validate_inputs_array(def, file, "namedInputs." + name));
    }
    if (const Json* td = nx.find("targetDefaults")) {
        if (td->is_array())
            return shape_error(file, *td, "targetDefaults", "an object keyed by target name, executor or glob "
                                                            "(the array form of Nx 23 is not supported yet)");
        if (!td->is_object())
            return shape_error(file, *td, "targetDefaults", "an object");
        for (const auto& [key, t] : td->as_object()) {
            if (t.is_array())
                return shape_error(file, t, "targetDefaults." + key,
                                   "a target configuration object (filtered entries are not supported yet)");
            QK_TRY_STATUS(validate_target(t, file, "targetDefaults." + key));
        }
    }
    // The run options Nx reads from the top level (Nx 17+) or, before that, tasksRunnerOptions.
    const Json* runner = nx.find("tasksRunnerOptions");
    const Json* def = runner ? runner->find("default") : nullptr;
    const Json* options = def ? def->find("options") : nullptr;
    for (auto [where, at] : {std::pair<std::string, const Json*>{"", &nx},
                             {"tasksRunnerOptions.default.options.", options}}) {
        if (!at || !at->is_object())
            continue;
        if (const Json* p = at->find("parallel");
            p && !(p->kind() == Json::Kind::number && p->as_number() >= 1 && p->as_number() == static_cast<long>(p->as_number())))
            return shape_error(file, *p, where + "parallel", "a whole number of tasks, 1 or more");
        QK_TRY_STATUS(expect_kind(at->find("skipNxCache"), Json::Kind::boolean, file, where + "skipNxCache", "true or false"));
    }
    return validate_qk_section(nx, file);
}

}  // namespace qk::workspace::detail
