// place(): the one step that moves an entry out of an upper layer into the workspace, atomically as seen
// from the workspace.
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk::enforce
{

// Puts `from` (in directory `from_dir`) at `to` in `to_dir`, replacing whatever is there: a file or link
// by rename(2), a directory (or anything, by a directory) by renameat2(RENAME_EXCHANGE), after which the
// old entry, now at `from`, is removed. Across filesystems (EXDEV) the entry is copied beside `to` under
// a temporary name first, then put in place the same way and removed from `from_dir`. So `to` always
// holds either the old entry or the whole new one. `shown` names it in errors.
Status place(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown);

} // namespace qk::enforce
