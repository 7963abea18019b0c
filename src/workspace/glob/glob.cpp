// Glob and GlobSet over the compiled alternatives (glob_convert.cpp builds them, glob_match.cpp matches them).
#include "qk/workspace/glob.hpp"

#include "glob_convert.hpp"

namespace qk::workspace {

using glob_detail::Alternative;
using glob_detail::Compiled;

namespace {

// NxGlobSet::is_match: (no positive, or any positive) and no negative.
template <class Range> bool set_matches(const Range& positives, const Range& negatives, std::string_view path)
{
    bool in = positives.empty();
    for (const Alternative* a : positives)
        if (a->matches(path)) {
            in = true;
            break;
        }
    if (!in)
        return false;
    for (const Alternative* a : negatives)
        if (a->matches(path))
            return false;
    return true;
}

template <class Range> bool set_may_match_under(const Range& positives, const Range& negatives, std::string_view dir)
{
    for (const Alternative* a : negatives)
        if (a->covers_tree(dir))
            return false;
    if (positives.empty())
        return true;
    for (const Alternative* a : positives)
        if (a->may_match_under(dir))
            return true;
    return false;
}

struct Split {
    std::vector<const Alternative*> positives, negatives;
};

Split split(const Compiled& c)
{
    Split s;
    for (const Alternative& a : c.alternatives)
        (a.negative ? s.negatives : s.positives).push_back(&a);
    return s;
}

template <class Patterns> Result<GlobSet> compile_set(const Patterns& patterns, bool fileset)
{
    GlobSet set;
    for (const auto& p : patterns) {
        QK_TRY(g, fileset ? Glob::compile_fileset(p) : Glob::compile(p));
        set.add(*g);
    }
    return set;
}

}  // namespace

Result<Glob> Glob::compile(std::string_view pattern)
{
    QK_TRY(c, glob_detail::compile_glob(pattern, false));
    return Glob(std::move(*c));
}

Result<Glob> Glob::compile_fileset(std::string_view pattern)
{
    QK_TRY(c, glob_detail::compile_glob(pattern, true));
    return Glob(std::move(*c));
}

bool Glob::matches(std::string_view path) const
{
    const auto& alts = impl_->alternatives;
    if (alts.size() == 1)
        return alts[0].matches(path) != alts[0].negative;
    // Alternatives are few, so splitting them per call costs less than storing the split would.
    bool any_positive = false, in = false;
    for (const Alternative& a : impl_->alternatives) {
        if (a.negative)
            continue;
        any_positive = true;
        if (a.matches(path)) {
            in = true;
            break;
        }
    }
    if (any_positive && !in)
        return false;
    for (const Alternative& a : impl_->alternatives)
        if (a.negative && a.matches(path))
            return false;
    return true;
}

bool Glob::may_match_under(std::string_view dir) const
{
    Split s = split(*impl_);
    return set_may_match_under(s.positives, s.negatives, dir);
}

std::string_view Glob::literal_prefix() const
{
    return impl_->prefix;
}
const std::string& Glob::pattern() const
{
    return impl_->pattern;
}
bool Glob::negated() const
{
    return impl_->negated;
}
bool Glob::is_literal() const
{
    return impl_->literal;
}

bool Glob::names_path() const
{
    return impl_->names_path;
}

std::vector<std::string> Glob::expansion() const
{
    std::vector<std::string> out;
    for (const Alternative& a : impl_->alternatives)
        out.push_back(a.text);
    return out;
}

Result<GlobSet> GlobSet::compile(std::span<const std::string> patterns)
{
    return compile_set(patterns, false);
}
Result<GlobSet> GlobSet::compile(std::initializer_list<std::string_view> patterns)
{
    return compile_set(patterns, false);
}
Result<GlobSet> GlobSet::compile_fileset(std::span<const std::string> patterns)
{
    return compile_set(patterns, true);
}
Result<GlobSet> GlobSet::compile_fileset(std::initializer_list<std::string_view> patterns)
{
    return compile_set(patterns, true);
}

void GlobSet::add(const Glob& glob)
{
    globs_.push_back(glob);
    for (const Alternative& a : glob.impl_->alternatives) {
        if (a.negative) {
            negatives_.push_back(&a);
            continue;
        }
        positives_.push_back(&a);
        prefix_ = prefix_set_ ? glob_detail::common_prefix(prefix_, a.prefix) : a.prefix;
        prefix_set_ = true;
    }
}

bool GlobSet::matches(std::string_view path) const
{
    return set_matches(positives_, negatives_, path);
}

bool GlobSet::may_match_under(std::string_view dir) const
{
    return set_may_match_under(positives_, negatives_, dir);
}

}  // namespace qk::workspace
