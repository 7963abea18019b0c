// gitignore matching as git does it (dir.c + wildmatch.c semantics), for the file index's walker. The Nx
// Glob engine is not used here on purpose: braces and extglobs mean nothing in ignore files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qk::key {

// git's wildmatch() with WM_PATHNAME: `*`, `?` and `[...]` never match '/', `**` between slashes
// (or at either end) matches any number of directories, `\` escapes, [!...]/[^...], ranges and
// [:class:] in brackets.
bool wildmatch(std::string_view pattern, std::string_view text);

// The patterns of one ignore file (.gitignore, .nxignore, .ignore, .git/info/exclude).
class IgnoreFile {
public:
    enum class Verdict : std::uint8_t { none, ignore, keep };

    // Parses the file's text as git does: a leading BOM skipped, CRLF accepted, blank lines and `#`
    // comments dropped, trailing unescaped spaces trimmed, `!` negates, a trailing `/` means
    // directories only, a `/` elsewhere anchors the pattern to the file's directory.
    static IgnoreFile parse(std::string_view text);

    bool empty() const { return patterns_.empty(); }

    // The verdict of the last pattern matching `path` (relative to the ignore file's directory;
    // `basename` is its last component), or none when no pattern matches.
    Verdict match(std::string_view path, std::string_view basename, bool is_dir) const;

private:
    struct Pattern {
        std::string text;           // without `!` and the trailing `/`
        std::uint32_t literal = 0;  // length of the leading part without glob characters
        bool negative = false;
        bool dir_only = false;       // written with a trailing `/`
        bool basename_only = false;  // no `/` in it: matched against the last component
        bool ends_with = false;      // `*literal`: a suffix comparison is enough
    };
    std::vector<Pattern> patterns_;
};

// The ignore sources of the walk, highest precedence first, as the `ignore` crate ranks them (Nx's
// walker: .nxignore is its custom ignore file name). A verdict from a higher source wins whatever the
// lower ones say; within a source the deepest directory with a matching pattern wins.
enum class IgnoreSource : std::uint8_t { nxignore, ignore, gitignore, git_exclude };
inline constexpr std::size_t ignore_source_count = 4;

// The ignore files in force while walking: one level per directory that has any, innermost last.
// Copies share the files, so a walk can hand its stack to another thread cheaply.
class IgnoreStack {
public:
    // The files of one directory, by IgnoreSource; an empty IgnoreFile for a source it lacks.
    using Files = std::array<IgnoreFile, ignore_source_count>;

    // Adds the files of the directory whose workspace-relative path, with its trailing '/' ("" for
    // the root), is `base_len` bytes long.
    void push(std::size_t base_len, Files files);
    void pop() { levels_.pop_back(); }
    std::size_t depth() const { return levels_.size(); }

    // Whether the entry at workspace-relative `path` (last component `basename`) is ignored. Only
    // levels of its ancestors may be on the stack.
    bool ignored(std::string_view path, std::string_view basename, bool is_dir) const;

private:
    struct Level {
        std::size_t base_len = 0;
        std::shared_ptr<const Files> files;
    };
    std::vector<Level> levels_;
};

}  // namespace qk::key
