// place(): the one step that moves an entry out of an upper layer into the workspace, atomically as seen
// from the workspace.
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "trash.hpp"

namespace qk::enforce {

// Puts `from` (in directory `from_dir`) at `to` in `to_dir`. Over nothing, a rename(2) that refuses to
// replace; over anything (file, link, directory with all in it), renameat2(RENAME_EXCHANGE), after which
// the old entry, now at `from`, goes to `trash`. Across filesystems (EXDEV) the entry is first copied
// beside `to` under a temporary name, then put in place the same way. Either way `to` always holds the
// old entry or the whole new one. Only on a filesystem without RENAME_EXCHANGE is the old entry moved
// away first, leaving `to` missing for a moment. `shown` names the entry in errors.
Status place(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown,
             Trash& trash);

}  // namespace qk::enforce
