// Glob and GlobSet: Nx's fileset globs, matched against '/'-separated paths relative to the workspace root
// (no leading '/', no "//", no trailing '/'). The semantics are those of Nx's native hasher: globset with
// literal_separator and backslash escapes, extglobs rewritten the way Nx's convert_glob rewrites them, and a
// group of globs matched as "(no positive || any positive) && no negative". src/workspace/glob_convert.cpp
// explains the extglob rewrite and where qk departs from Nx.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::workspace {

namespace glob_detail {
struct Compiled;
struct Alternative;
}  // namespace glob_detail

// A compiled glob pattern with Nx's fileset semantics.
//
// Syntax: `*` and `?` within one path component (dotfiles included), `**` as a whole component (any depth,
// zero included; a trailing `/**` needs at least one component, so `a/**` does not match `a`), classes
// `[abc]` `[a-z]` `[!x]` `[^x]`, braces `{a,b}` (nested, may hold '/', no ranges), `\` escapes, the extglobs
// `?(…)` `*(…)` `+(…)` `@(…)` `!(…)` and Nx's bare group `(…)` with `|` or `,` between alternatives. A leading
// `!` (not followed by `(`) negates the pattern; a trailing `/` means everything under (`dir/` is `dir/**`).
// The empty pattern matches nothing (it matches only the empty path).
class Glob {
public:
    // Error names the pattern, the column (1-based, in characters) and what is wrong.
    static Result<Glob> compile(std::string_view pattern);
    // As compile(), but a pattern with no glob syntax names that path or everything under it, the way Nx
    // reads fileset inputs (`libs/app/src` is `libs/app/src` and `libs/app/src/**`).
    static Result<Glob> compile_fileset(std::string_view pattern);

    // A negated glob matches every path its body does not match. Extglob negations inside a positive glob
    // exclude what they name: `dist/!(cache)/**` matches under dist/ except dist/cache/.
    bool matches(std::string_view path) const;
    // False only when no path strictly under `dir` ("" is the root) can match: a walk may skip `dir`.
    bool may_match_under(std::string_view dir) const;

    // The leading components with no magic ("packages/app/src" for "packages/app/src/**/*.ts"), escapes
    // resolved, common to every positive alternative, so a walk can start there instead of at the root.
    // The whole path when the pattern is literal (then it may name a file); "" for a negated glob.
    std::string_view literal_prefix() const;
    const std::string& pattern() const;
    bool negated() const;
    // True when the glob matches exactly one path (no syntax but escapes or a one-way group such as
    // `(x)`): literal_prefix() is that path. Glob is immutable: share and match from any thread.
    bool is_literal() const;
    // True when the pattern is a plain path (no syntax but escapes), not negated: literal_prefix() is
    // that path. A fileset glob (an input) naming a path selects it and everything beneath it, so it
    // is not is_literal(), but it names a path the sandbox allows whole.
    bool names_path() const;
    // The plain signed globs the pattern stands for, in the form of Nx's convert_glob ("!" marks an
    // exclusion), for `qk show` and for debugging a key.
    std::vector<std::string> expansion() const;

private:
    friend class GlobSet;
    explicit Glob(std::shared_ptr<const glob_detail::Compiled> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const glob_detail::Compiled> impl_;
};

// A group of globs matched the way Nx matches one fileset group (NxGlobSet::is_match in nrwl/nx
// packages/nx/src/native/glob.rs): a path matches when (there is no positive alternative, or any positive
// alternative matches) and no negative alternative matches. Order does not matter (this is not gitignore's
// last-match-wins); a negation, or the negating part of an extglob, excludes across the whole group; a group
// of negations only means "everything except"; the empty group matches everything.
class GlobSet {
public:
    GlobSet() = default;
    static Result<GlobSet> compile(std::span<const std::string> patterns);
    static Result<GlobSet> compile(std::initializer_list<std::string_view> patterns);
    // Each pattern read by Glob::compile_fileset.
    static Result<GlobSet> compile_fileset(std::span<const std::string> patterns);
    static Result<GlobSet> compile_fileset(std::initializer_list<std::string_view> patterns);

    void add(const Glob& glob);
    bool matches(std::string_view path) const;
    // False only when no path strictly under `dir` can match (no positive reaches it, or a negation
    // excludes the whole subtree).
    bool may_match_under(std::string_view dir) const;
    // The leading components common to every positive alternative, as Glob::literal_prefix() ("" when there
    // is no positive, or they share nothing), so a walk for the whole group can start there.
    const std::string& literal_prefix() const { return prefix_; }
    const std::vector<Glob>& globs() const { return globs_; }
    bool empty() const { return globs_.empty(); }

private:
    std::vector<Glob> globs_;
    std::vector<const glob_detail::Alternative*> positives_;
    std::vector<const glob_detail::Alternative*> negatives_;
    std::string prefix_;
    bool prefix_set_ = false;
};

}  // namespace qk::workspace
