// qk report fix's view of a read file that only another task makes: git-ignored (so no input can key it)
// and lying in a target's declared outputs. Such a file is a dependency, not an input: that task in the
// reader's dependsOn puts its outputs in the reader's rules and its key in the reader's key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/workspace/glob.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::cli {

// A target whose declared outputs hold a file.
struct Producer {
    const workspace::Project* project = nullptr;
    const workspace::Target* target = nullptr;

    // The dependsOn entry naming it: {"projects": ["<project>"], "target": "<target>"}, as a JSON text.
    std::string depends_on_json() const;
    std::string id() const { return project->name + ":" + target->name; }
};

// The workspace-relative path a suggested value names ("{projectRoot}/x" in `project`, "{workspaceRoot}/x"),
// when it is a plain path; nullopt for a glob or anything else.
std::optional<std::string> value_path(std::string_view value, const workspace::Project& project);

// Each target's resolved outputs, compiled once for a plan.
class Producers {
public:
    explicit Producers(const workspace::Workspace& ws);
    // The first target (by project, then target name) other than `reader` whose outputs hold `path`.
    std::optional<Producer> of(std::string_view path, const workspace::Target& reader) const;

private:
    std::vector<std::pair<Producer, workspace::GlobSet>> outputs_;
};

// Whether the target's dependsOn names the producer's task already: its project and target, or the
// target in its own project.
bool depends_on(const workspace::Project& project, const workspace::Target& target, const Producer& producer);

}  // namespace qk::cli
