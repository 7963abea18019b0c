// Nx's tokens, resolved in one place for every kind of value that holds them (inputs, outputs, warm
// paths, ignoreReads, scratch entries, executor options): {workspaceRoot}, only at the start;
// {projectRoot}; {projectName}; and, for outputs, {options.x} and {project.x}. What differs between those
// values is a policy, and what each does with the text afterwards (a path, a glob, a plain string).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/json.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace {

struct TokenPolicy {
    // A brace group that is none of the three tokens: kept as written (a glob's {a,b}), looked up in
    // `options` and the project's configuration ({options.x}, {project.x}, as outputs allow), or refused
    // (a scratch entry names one plain directory).
    enum class Other { keep, lookup, refuse };
    Other other = Other::keep;
    const Json* options = nullptr;  // for Other::lookup
};

struct ResolvedTokens {
    std::string text;  // the value with its tokens replaced; a leading "{workspaceRoot}/" dropped
    enum class Lead { none, workspace_root, project_root };
    Lead lead = Lead::none;  // the token the value starts with
    bool negated = false;    // it started with "!", which `text` no longer holds
    bool unresolved = false; // a looked-up token named nothing (Nx drops such an output)
};

// {projectRoot} is the project's root as written ("." for the root project); turn the text into a path
// with `relative_path`. Errors, as fragments a caller puts after the value it names: "{workspaceRoot} may
// only start a path" (ErrorKind::workspace_root_not_first), "{workspaceRoot} must be followed by /"
// (ErrorKind::workspace_root_without_slash), "holds {x}, which is not a token ...".
Result<ResolvedTokens> resolve_tokens(std::string_view written, const Project& project, const TokenPolicy& policy = {});

// A '/'-separated path as a normalised workspace-relative one: "." and empty components dropped; "" for
// the root itself. nullopt when it is absolute or has a ".." component, unless `parent_steps` lets ".."
// take the component before it (a plain directory; a glob's ".." is never resolved), in which case
// nullopt only when it leaves the workspace.
std::optional<std::string> relative_path(std::string_view path, bool parent_steps = false);

// Why a resolved path that `relative_path` refused (`resolved`, as written `written`) is refused, and what
// to write instead, as a fragment a caller puts after the value it names: an absolute path, one that
// leads outside the workspace, or one inside it that steps up with "..", whose plain spelling it gives.
std::string outside_path_advice(std::string_view written, std::string_view resolved);

}  // namespace qk::workspace
