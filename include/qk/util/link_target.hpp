// Where a symbolic link a task left leads, read as text: the one rule for links in outputs that the
// overlay's applier, the local cache's store and restore and a remote entry's import all apply, so a
// link that points away is refused the same way wherever it comes from (docs/sandbox.md, "Outputs that
// point away").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace qk {

// The workspace-relative path ("" for the root) a symbolic link at workspace-relative `link` whose
// target is `target` names, resolved as text from the link's own directory; nullopt when it leaves the
// workspace (absolute, or a ".." above the root), is empty or holds a NUL, or cannot be told from the
// text alone: a ".." after a name ("a/../x") climbs out of whatever "a" is, which may itself be a link.
std::optional<std::string> link_destination(std::string_view link, std::string_view target);

}  // namespace qk
