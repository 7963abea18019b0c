// How configuration layers combine, following Nx (nx/src/project-graph/utils/project-configuration/
// target-merging.ts, project-configuration-utils.ts): the `command` shorthand, target compatibility,
// merging a target onto a lower layer, filling a target in from its targetDefaults entry, merging a
// project layer (package.json < project.json < project.local.json), and nx.local.json's deep merge.
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace::detail {

// {command: c, ...} becomes {..., executor: "nx:run-commands", options: {..., command: c}}.
// A target with both `command` and `executor` is an error (Nx: "should not have executor and command
// both configured"); `where` names it.
Result<Json> resolve_command_sugar(const Json& target, std::string_view where);

// Nx's isCompatibleTarget: executors equal or one missing; for nx:run-commands the commands, for
// nx:run-script the scripts, equal or one missing.
bool is_compatible_target(const Json& a, const Json& b);

// Nx's mergeTargetConfigurations: `target` (the higher layer) over `base`. Top-level properties of
// `target` replace the base's; options and each configuration merge key by key; when the targets are
// incompatible the base is dropped. An array holding "..." (Nx 23's spread token) takes the base's
// array in its place.
Json merge_target_configurations(const Json& target, const Json* base);

// Nx's mergeTargetDefaultWithTargetDefinition for targets from package.json and project.json: the
// definition wins for every property it sets, the default fills in the rest (options and each
// configuration key by key). `target_default` must already be normalised (sugar, tokens).
Json merge_target_default(const Json& definition, const Json& target_default);

// Nx's mergeProjectConfigurationIntoRootMap: `layer` over `into`. tags accumulate (deduplicated),
// implicitDependencies accumulate, namedInputs merge by name, targets merge one by one
// (merge_target_configurations, after the `command` shorthand), anything else is replaced.
Status merge_project_layer(Json& into, const Json& layer, std::string_view file);

// nx.local.json over nx.json: objects merge member by member, recursively; any other value replaces.
Json deep_merge(const Json& base, const Json& over);

// Nx's resolveNxTokensInOptions, recursively over objects and arrays: a leading "{workspaceRoot}/"
// is removed, "{workspaceRoot}" anywhere else is an error, "{projectRoot}" and "{projectName}" are
// replaced. `where` names the options in the error.
Result<Json> resolve_tokens_in_options(const Json& options, std::string_view project_root,
                                       std::string_view project_name, std::string_view where);

// Drops the "..." left in a target's arrays (top level and options) once no lower layer remains.
Json strip_spreads(const Json& target);

// Replaces a "..." element of `over` with the items of `base` (both arrays); without a base array the
// token is dropped.
Json spread_array(const Json& over, const Json* base);

}  // namespace qk::workspace::detail
