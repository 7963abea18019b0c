// Where an edit of nx.json reaches (qk report fix): whether the text qk would edit is what qk reads, and
// which tasks take what nx.json declares (namedInputs.sharedGlobals, a targetDefaults entry).
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

#include "qk/workspace/workspace.hpp"

namespace qk::cli {

constexpr std::string_view kSharedGlobals = "sharedGlobals";
constexpr std::string_view kUltracache = "qk:ultracache";
constexpr std::string_view kIgnoreReads = "ignoreReads";  // in a target's "qk:ultracache"

// nx.json as written, beside what qk reads (the file it extends beneath, nx.local.json above).
class NxText {
public:
    explicit NxText(const workspace::Workspace& ws);
    // Whether an edit of nx.json's text at `path` reaches the configuration qk reads: at each step the
    // text and the merged configuration agree on what is there (a member only the merged one has comes
    // from the file nx.json extends, which writing it here would replace whole), and nx.local.json, which
    // would win, does not name it. False without an nx.json.
    bool takes_effect(std::initializer_list<std::string_view> path) const;

private:
    const workspace::Workspace& ws_;
    std::optional<workspace::Json> doc_, local_;
};

// Whether the task's own inputs take nx.json's sharedGlobals: an array there, not redefined by the
// project, reached from the target's inputs (or Nx's default ones) through named inputs as Nx expands them.
bool takes_shared_globals(const workspace::Workspace& ws, const workspace::Project& project,
                          const workspace::Target& target);

// Whether the target takes `key` ("inputs", "outputs") from the targetDefaults entry keyed by its name,
// or would from one made with that name: its project does not name the key, and no entry keyed by its
// executor or a glob (nor one by its name that does not fit it) applies, nor is there a glob key an entry
// by the name would take the place of.
bool inherits_by_name(const workspace::Workspace& ws, const workspace::Target& t, std::string_view key);

}  // namespace qk::cli
