// A project's configuration layers, lowest first, merged as Nx merges its core plugins' results:
//   package.json: {name, ...nx, targets: scripts (nx:run-script) with nx.targets over them, tags}
//                 (nx/src/plugins/package-json: buildProjectConfigurationFromPackageJson,
//                 readTargetsFromPackageJson, getTagsFromPackageJson);
//   project.json (the project-json plugin runs after package-json, so it wins);
//   project.local.json (qk's: a developer's overrides, one more layer merged the same way).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_merge.hpp"
#include "config_validate.hpp"

namespace qk::workspace::detail {

namespace fs = std::filesystem;

namespace {

std::string in_dir(const std::string& dir, const char* file)
{
    return dir == "." ? std::string(file) : dir + "/" + file;
}

// The package.json layer, or an error naming the file.
Result<Json> package_json_layer(const Json& pkg, const std::string& file, const std::string& root)
{
    if (!pkg.is_object())
        return shape_error(file, pkg, "the file's top level", "an object");
    const Json* nx = pkg.find("nx");
    if (nx)
        QK_TRY_STATUS(validate_project_layer(*nx, file, "nx"));
    const Json* scripts = pkg.find("scripts");
    if (scripts) {
        if (!scripts->is_object())
            return shape_error(file, *scripts, "scripts", "an object");
        for (const auto& [name, text] : scripts->as_object())
            if (!text.is_string())
                return shape_error(file, text, "scripts." + name, "a string");
    }
    if (nx)
        if (const Json* inc = nx->find("includedScripts"))
            QK_TRY_STATUS(validate_string_array(*inc, file, "nx.includedScripts"));

    Json layer = Json::object();
    if (const Json* name = pkg.find("name"); name && name->is_string())
        layer.set("name", *name);
    layer.set("root", Json::string(root));
    if (nx)
        for (const auto& [k, v] : nx->as_object())
            if (k != "targets" && k != "tags" && k != "includedScripts")
                layer.set(k, v);

    // Targets: each included script as nx:run-script, then nx.targets over them (one that says how
    // to run, with an executor or a command, replaces the script's target instead of merging).
    Json targets = Json::object();
    std::vector<std::string> included;
    if (const Json* inc = nx ? nx->find("includedScripts") : nullptr) {
        for (const auto& s : inc->as_array())
            included.push_back(s.as_string());
    } else if (scripts) {
        for (const auto& [name, text] : scripts->as_object())
            included.push_back(name);
    }
    for (const auto& script : included) {
        Json options = Json::object();
        options.set("script", Json::string(script));
        Json t = Json::object();
        t.set("executor", Json::string("nx:run-script"));
        t.set("options", std::move(options));
        if (const Json* text = scripts ? scripts->find(script) : nullptr)
            t.set_position(text->line(), text->column());
        targets.set(script, std::move(t));
    }
    if (const Json* nx_targets = nx ? nx->find("targets") : nullptr) {
        for (const auto& [name, t] : nx_targets->as_object()) {
            const Json* script_target = targets.find(name);
            if (script_target && (t.find("executor") || t.find("command"))) {
                targets.set(name, t);
            } else {
                QK_TRY(sugared, resolve_command_sugar(t, fmt::format("{}: nx.targets.{}", file, name)));
                targets.set(name, merge_target_configurations(*sugared, script_target));
            }
        }
    }
    layer.set("targets", std::move(targets));

    Json tags = Json::array();
    const Json* priv = pkg.find("private");
    tags.as_array().push_back(Json::string(priv && priv->truthy() ? "npm:private" : "npm:public"));
    if (const Json* kw = pkg.find("keywords"); kw && kw->is_array())
        for (const auto& k : kw->as_array())
            if (k.is_string())
                tags.as_array().push_back(Json::string("npm:" + k.as_string()));
    if (const Json* nx_tags = nx ? nx->find("tags") : nullptr)
        for (const auto& t : nx_tags->as_array())
            tags.as_array().push_back(t);
    layer.set("tags", std::move(tags));
    return layer;
}

// Merges `layer` (read from `file`) into raw.merged and records which files define each target: a
// target replaced by an incompatible one forgets the files below.
Status add_layer(RawProject& raw, const Json& layer, const std::string& file)
{
    if (const Json* targets = layer.find("targets")) {
        const Json* existing = raw.merged.find("targets");
        for (const auto& [name, t] : targets->as_object()) {
            auto& files = raw.target_files[name];
            const Json* below = existing ? existing->find(name) : nullptr;
            QK_TRY(sugared, resolve_command_sugar(t, fmt::format("{}: targets.{}", file, name)));
            if (below && !is_compatible_target(*below, *sugared))
                files.clear();
            files.push_back(file);
        }
    }
    return merge_project_layer(raw.merged, layer, file);
}

}  // namespace

Result<RawProject> read_project(const fs::path& root, const std::string& project_root)
{
    RawProject raw;
    raw.root = project_root;
    raw.merged = Json::object();
    raw.merged.set("root", Json::string(project_root));

    bool found = false;
    std::string pkg_file = in_dir(project_root, "package.json");
    QK_TRY(pkg, read_optional_json(root, pkg_file, &found));
    if (found) {
        raw.package_json = pkg_file;
        QK_TRY(layer, package_json_layer(*pkg, pkg_file, project_root));
        raw.manifest = std::move(*pkg);
        QK_TRY_STATUS(add_layer(raw, *layer, pkg_file));
    }
    for (const char* name : {"project.json", "project.local.json"}) {
        std::string file = in_dir(project_root, name);
        QK_TRY(layer, read_optional_json(root, file, &found));
        if (!found)
            continue;
        QK_TRY_STATUS(validate_project_layer(*layer, file, ""));
        (std::string_view(name) == "project.json" ? raw.project_json : raw.project_local_json) = file;
        Json l = std::move(*layer);
        l.erase("root");  // the directory is the root, whatever the file says
        QK_TRY_STATUS(add_layer(raw, l, file));
    }
    return raw;
}

std::string project_name(const RawProject& raw, const fs::path& workspace_root)
{
    if (const Json* name = raw.merged.find("name"); name && name->is_string() && !name->as_string().empty())
        return name->as_string();
    std::string dir = raw.root == "." ? workspace_root.filename().string() : fs::path(raw.root).filename().string();
    if (dir.empty())
        dir = fs::path(workspace_root).parent_path().filename().string();
    std::transform(dir.begin(), dir.end(), dir.begin(), [](unsigned char c) { return std::tolower(c); });
    return dir;
}

}  // namespace qk::workspace::detail
