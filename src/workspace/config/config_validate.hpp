// Shape checks of configuration files, run on each file as it is read so that a message can name the
// file, line and column; what is merged afterwards is then well-formed. Unknown keys are allowed (Nx
// allows them), known keys must have the types Nx and qk give them.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/network.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace::detail {

// "<file>:<line>:<col>: <path> must be <expected>, found <what value is>".
Error shape_error(std::string_view file, const Json& value, std::string_view path, std::string_view expected);

// A target configuration (project.json targets.x, package.json nx.targets.x, nx.json targetDefaults.x,
// and the same in the .local.json files). `path` is how the file spells it ("targets.build").
Status validate_target(const Json& target, std::string_view file, std::string_view path);

// A project configuration layer: project.json, project.local.json, or package.json's "nx" field
// (`path` "" or "nx").
Status validate_project_layer(const Json& project, std::string_view file, std::string_view path);

// nx.json, the file it extends, nx.local.json.
Status validate_nx_json(const Json& nx, std::string_view file);

// nx.json's "qk" section (config_qk_section.cpp): its keys, remoteCache's keys and values, and never a token.
Status validate_qk_section(const Json& nx, std::string_view file);
// The merged nx.json's qk.remoteCache, validated already in each file; `file_of(key)` names the file that
// set qk.remoteCache.<key>, for the positions a later check quotes.
using FileOf = std::function<std::string(std::string_view key)>;
RemoteCacheConfig read_remote_cache_config(const Json& nx, const FileOf& file_of);
// The merged nx.json's qk.sandbox.network (validated already): the workspace's default.
NetworkDeclaration read_workspace_network(const Json& nx);
// The merged nx.json's qk.inputsNeverReadAfterRuns (validated already), or `otherwise`.
unsigned read_inputs_never_read_after_runs(const Json& nx, unsigned otherwise);

// "network": false, true or a list of host patterns (config_network.cpp); `path` as the file spells it.
Status validate_network(const Json& value, std::string_view file, std::string_view path);
// The declaration a validated "network" value makes (undeclared when `value` is null); `source` is
// NetworkDeclaration::source.
NetworkDeclaration read_network(const Json* value, std::string_view source);

// An array of strings (`path` for messages).
Status validate_string_array(const Json& value, std::string_view file, std::string_view path);

}  // namespace qk::workspace::detail
