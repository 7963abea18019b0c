// Configuration layers, merged as Nx merges them (see config_merge.hpp for the sources).
#include "config_merge.hpp"

#include "qk/workspace/tokens.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace qk::workspace::detail {
namespace {

const Json kEmptyObject = Json::object();

const Json& member_or_empty(const Json& j, std::string_view key)
{
    const Json* m = j.find(key);
    return m ? *m : kEmptyObject;
}

std::string executor_of(const Json& t)
{
    const Json* e = t.find("executor");
    return e && e->is_string() ? e->as_string() : std::string();
}

// options.command ?? options.commands.join(' && '), as JavaScript would print it; "" when neither.
std::string run_commands_text(const Json& t)
{
    const Json* opts = t.find("options");
    if (!opts)
        return {};
    if (const Json* c = opts->find("command"); c && c->truthy()) {
        if (c->is_string())
            return c->as_string();
        return c->dump();
    }
    if (const Json* cs = opts->find("commands"); cs && cs->is_array()) {
        std::string out;
        for (const auto& c : cs->as_array()) {
            if (!out.empty())
                out += " && ";
            out += c.is_string() ? c.as_string() : std::string("[object Object]");
        }
        return out;
    }
    return {};
}

std::string run_script_name(const Json& t)
{
    const Json* opts = t.find("options");
    const Json* s = opts ? opts->find("script") : nullptr;
    return s && s->is_string() ? s->as_string() : std::string();
}

bool is_spread(const Json& j) { return j.is_string() && j.as_string() == "..."; }

// getMergeValueResult without object spreads: the new value, with an array's "..." expanded over the
// base's value. Without a base the "..." stays for a lower layer met later (targetDefaults) to fill,
// as Nx defers it (deferSpreadsWithoutBase); strip_spreads drops what is left at the end.
Json merge_value(const Json* base, const Json& over)
{
    if (over.is_array() && base)
        return spread_array(over, base);
    return over;
}

// {...base, ...over} key by key, keeping base's order for shared keys.
Json merge_key_by_key(const Json& base, const Json& over)
{
    Json out = Json::object();
    if (base.is_object())
        for (const auto& [k, v] : base.as_object())
            out.set(k, v);
    if (over.is_object())
        for (const auto& [k, v] : over.as_object())
            out.set(k, merge_value(base.find(k), v));
    return out;
}

}  // namespace

Json spread_array(const Json& over, const Json* base)
{
    if (!over.is_array() || std::none_of(over.as_array().begin(), over.as_array().end(), is_spread))
        return over;
    Json::Array items;
    for (const auto& item : over.as_array()) {
        if (is_spread(item)) {
            if (base && base->is_array())
                for (const auto& b : base->as_array())
                    items.push_back(b);
        } else {
            items.push_back(item);
        }
    }
    Json out = Json::array(std::move(items));
    out.set_position(over.line(), over.column());
    return out;
}

Json strip_spreads(const Json& target)
{
    Json out = target;
    for (auto& [k, v] : out.as_object()) {
        if (v.is_array()) {
            v = spread_array(v, nullptr);
        } else if (k == "options" && v.is_object()) {
            for (auto& [ok, ov] : v.as_object())
                if (ov.is_array())
                    ov = spread_array(ov, nullptr);
        }
    }
    return out;
}

Result<Json> resolve_command_sugar(const Json& target, std::string_view where)
{
    const Json* command = target.find("command");
    if (!command || !command->truthy())
        return target;
    if (target.find("executor"))
        return error(fmt::format("{}: a target cannot have both \"executor\" and \"command\"; keep one of them",
                                 where));
    Json out = Json::object();
    Json options = Json::object();
    for (const auto& [k, v] : target.as_object()) {
        if (k == "command")
            continue;
        if (k == "options" && v.is_object()) {
            options = v;
            continue;
        }
        out.set(k, v);
    }
    out.set("executor", Json::string("nx:run-commands"));
    options.set("command", *command);
    out.set("options", std::move(options));
    out.set_position(target.line(), target.column());
    return out;
}

bool is_compatible_target(const Json& a, const Json& b)
{
    std::string ea = executor_of(a), eb = executor_of(b);
    if (ea.empty() || eb.empty())
        return true;
    if (ea != eb)
        return false;
    if (ea == "nx:run-commands") {
        std::string ca = run_commands_text(a), cb = run_commands_text(b);
        return ca.empty() || cb.empty() || ca == cb;
    }
    if (ea == "nx:run-script") {
        std::string sa = run_script_name(a), sb = run_script_name(b);
        return sa.empty() || sb.empty() || sa == sb;
    }
    return true;
}

Json merge_target_configurations(const Json& target, const Json* base)
{
    const Json& b = base ? *base : kEmptyObject;
    bool compatible = is_compatible_target(b, target);
    Json out = Json::object();
    if (compatible) {
        for (const auto& [k, v] : b.as_object())
            if (k != "options" && k != "configurations")
                out.set(k, v);
    }
    for (const auto& [k, v] : target.as_object()) {
        if (k == "options" || k == "configurations")
            continue;
        out.set(k, merge_value(compatible ? b.find(k) : nullptr, v));
    }
    const Json* t_opts = target.find("options");
    const Json* b_opts = b.find("options");
    if (t_opts || b_opts) {
        out.set("options", merge_key_by_key(compatible && b_opts ? *b_opts : kEmptyObject,
                                            t_opts ? *t_opts : kEmptyObject));
    }
    const Json* t_cfg = target.find("configurations");
    const Json* b_cfg = b.find("configurations");
    if (t_cfg || b_cfg) {
        Json merged = Json::object();
        const Json& bc = compatible && b_cfg ? *b_cfg : kEmptyObject;
        const Json& tc = t_cfg ? *t_cfg : kEmptyObject;
        for (const auto& [name, v] : bc.as_object())
            merged.set(name, merge_key_by_key(v, member_or_empty(tc, name)));
        for (const auto& [name, v] : tc.as_object())
            if (!merged.find(name))
                merged.set(name, merge_key_by_key(kEmptyObject, v));
        out.set("configurations", std::move(merged));
    }
    out.set_position(target.line(), target.column());
    return out;
}

Json merge_target_default(const Json& definition, const Json& target_default)
{
    Json out = definition;
    for (const auto& [key, dv] : target_default.as_object()) {
        if (key == "options") {
            Json options = member_or_empty(definition, "options");
            for (const auto& [ok, ov] : dv.as_object())
                if (!options.find(ok))
                    options.set(ok, ov);
            out.set("options", std::move(options));
        } else if (key == "configurations") {
            Json configurations = member_or_empty(definition, "configurations");
            for (const auto& [name, cfg] : dv.as_object()) {
                Json merged = member_or_empty(configurations, name);
                for (const auto& [ck, cv] : cfg.as_object())
                    if (!merged.find(ck))
                        merged.set(ck, cv);
                configurations.set(name, std::move(merged));
            }
            out.set("configurations", std::move(configurations));
        } else if (const Json* mine = definition.find(key)) {
            Json base = spread_array(dv, nullptr);  // a "..." of the default's has nothing under it
            out.set(key, merge_value(&base, *mine));  // the definition's value, its "..." taking the default's
        } else {
            out.set(key, spread_array(dv, nullptr));
        }
    }
    return out;
}

Status merge_project_layer(Json& into, const Json& layer, std::string_view file)
{
    for (const auto& [k, v] : layer.as_object()) {
        if (k == "tags") {
            Json tags = member_or_empty(into, "tags").is_array() ? *into.find("tags") : Json::array();
            for (const auto& t : v.as_array())
                if (std::find(tags.as_array().begin(), tags.as_array().end(), t) == tags.as_array().end())
                    tags.as_array().push_back(t);
            into.set("tags", std::move(tags));
        } else if (k == "implicitDependencies") {
            Json deps = into.find(k) ? *into.find(k) : Json::array();
            for (const auto& d : v.as_array())
                deps.as_array().push_back(d);
            into.set(k, std::move(deps));
        } else if (k == "namedInputs") {
            Json named = into.find(k) ? *into.find(k) : Json::object();
            for (const auto& [name, def] : v.as_object())
                named.set(name, def);
            into.set(k, std::move(named));
        } else if (k == "targets") {
            Json targets = into.find(k) ? *into.find(k) : Json::object();
            for (const auto& [name, t] : v.as_object()) {
                QK_TRY(sugared, resolve_command_sugar(t, fmt::format("{}: targets.{}", file, name)));
                targets.set(name, merge_target_configurations(*sugared, targets.find(name)));
            }
            into.set(k, std::move(targets));
        } else {
            into.set(k, v);
        }
    }
    return {};
}

Json deep_merge(const Json& base, const Json& over)
{
    if (!base.is_object() || !over.is_object())
        return over;
    Json out = base;
    for (const auto& [k, v] : over.as_object()) {
        const Json* b = out.find(k);
        out.set(k, b ? deep_merge(*b, v) : v);
    }
    return out;
}

Result<Json> resolve_tokens_in_options(const Json& options, std::string_view project_root,
                                       std::string_view project_name, std::string_view where)
{
    if (options.is_string()) {
        // A project stands in for itself: only its root and name matter to the tokens of an option.
        Project project;
        project.root = std::string(project_root);
        project.name = std::string(project_name);
        auto r = resolve_tokens(options.as_string(), project);
        if (!r)  // an option is a value, not always a path: said in its words
            return error(fmt::format("{}: \"{}\": {}", where, options.as_string(),
                                     r.error().kind == ErrorKind::workspace_root_not_first
                                         ? "the {workspaceRoot} token may only begin a value"
                                         : r.error().message));
        std::string s = (r->negated ? "!" : "") + r->text;
        Json out = Json::string(std::move(s));
        out.set_position(options.line(), options.column());
        return out;
    }
    if (options.is_array()) {
        Json out = options;
        for (auto& item : out.as_array()) {
            QK_TRY(r, resolve_tokens_in_options(item, project_root, project_name, where));
            item = std::move(*r);
        }
        return out;
    }
    if (options.is_object()) {
        Json out = options;
        for (auto& [k, v] : out.as_object()) {
            QK_TRY(r, resolve_tokens_in_options(v, project_root, project_name, fmt::format("{}.{}", where, k)));
            v = std::move(*r);
        }
        return out;
    }
    return options;
}

}  // namespace qk::workspace::detail
