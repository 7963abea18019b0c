// Matching whole paths: an alternative's literal prefix, then its segments over the components below it,
// `**` handled by the greedy wildcard algorithm with components standing in for characters.
#include "glob_match.hpp"

#include "qk/util/path_within.hpp"

namespace qk::workspace::glob_detail {

namespace {

constexpr size_t npos = std::string_view::npos;

size_t component_end(std::string_view r, size_t pos)
{
    size_t e = r.find('/', pos);
    return e == npos ? r.size() : e;
}

// `**` over components: the greedy algorithm again, a globstar absorbing one more component on a mismatch.
// `none` means r holds no component at all (as opposed to one empty one).
bool match_components(const Segment* segs, size_t m, std::string_view r, bool none)
{
    size_t si = 0, pos = 0;
    bool done = none;
    size_t star_si = npos, star_pos = 0;
    while (!done) {
        if (si < m && segs[si].kind == Segment::Kind::globstar) {
            star_si = si++;
            star_pos = pos;
            continue;
        }
        size_t e = component_end(r, pos);
        if (si < m && match_segment(segs[si], r.substr(pos, e - pos))) {
            ++si;
            if (e == r.size())
                done = true;
            else
                pos = e + 1;
            continue;
        }
        if (star_si == npos)
            return false;
        size_t se = component_end(r, star_pos);
        si = star_si + 1;
        if (se == r.size()) {
            done = true;  // the globstar takes every component left
        } else {
            star_pos = se + 1;
            pos = star_pos;
        }
    }
    while (si < m && segs[si].kind == Segment::Kind::globstar)
        ++si;
    return si == m;
}

// The part of `path` below `prefix`: {rest, none} where none means path is prefix itself; false when elsewhere.
// Below by text (continues_by_component), not qk::is_under: a prefix is a glob's text, not a canonical
// path, and an anchored "" is a leading '/' (`/**/x` matches "/a/x", never "a/x"), where is_under's ""
// would be the root holding every relative path.
bool below(const Alternative& a, std::string_view path, std::string_view& rest, bool& none)
{
    std::string_view prefix = a.prefix;
    if (!a.anchored) {
        rest = path;
        none = path.empty();
        return true;
    }
    if (path == prefix) {
        rest = {};
        none = true;
        return true;
    }
    if (!continues_by_component(path, prefix))
        return false;
    rest = path.substr(prefix.size() + 1);
    none = false;
    return true;
}

}  // namespace

bool Alternative::matches(std::string_view path) const
{
    switch (shape) {
    case Shape::exact: return path == prefix;
    case Shape::all: return true;
    case Shape::tree: return anchored ? continues_by_component(path, prefix) : !path.empty();
    case Shape::basename: {
        std::string_view r;
        bool none = false;
        if (!below(*this, path, r, none) || none)
            return false;
        size_t slash = r.rfind('/');
        return match_segment(rest[1], slash == npos ? r : r.substr(slash + 1));
    }
    case Shape::general: {
        std::string_view r;
        bool none = false;
        if (!below(*this, path, r, none))
            return false;
        return match_components(rest.data(), rest.size(), r, none);
    }
    }
    return false;
}

bool Alternative::may_match_under(std::string_view dir) const
{
    if (shape == Shape::all)
        return true;
    if (dir.empty())
        return !(shape == Shape::exact && prefix.empty());  // everything is under the root
    if (continues_by_component(prefix, dir))
        return true;  // the prefix itself lies under dir
    std::string_view r;
    bool none = false;
    if (!below(*this, dir, r, none))
        return false;
    switch (shape) {
    case Shape::exact: return false;
    case Shape::all:
    case Shape::tree:
    case Shape::basename: return true;
    case Shape::general: break;
    }
    // Match dir's components as a prefix of the segments: a globstar reaches anything below.
    size_t si = 0, pos = 0;
    while (!none) {
        if (si == rest.size())
            return false;
        if (rest[si].kind == Segment::Kind::globstar)
            return true;
        size_t e = component_end(r, pos);
        if (!match_segment(rest[si], r.substr(pos, e - pos)))
            return false;
        ++si;
        if (e == r.size())
            break;
        pos = e + 1;
    }
    return si < rest.size();
}

bool Alternative::covers_tree(std::string_view dir) const
{
    std::string_view r;
    bool none = false;
    if (shape == Shape::all)
        return true;
    if (!below(*this, dir, r, none))
        return false;
    if (shape == Shape::tree)
        return true;
    if (shape != Shape::general || rest.size() < 2 || rest.back().kind != Segment::Kind::globstar ||
        rest[rest.size() - 2].kind != Segment::Kind::any_name)
        return false;
    // `head/**`: excluded when some ancestor-or-self of dir matches head exactly.
    size_t head = rest.size() - 2;
    if (match_components(rest.data(), head, {}, true))
        return true;
    for (size_t pos = 0; !none;) {
        size_t end = component_end(r, pos);
        if (match_components(rest.data(), head, r.substr(0, end), false))
            return true;
        if (end == r.size())
            break;
        pos = end + 1;
    }
    return false;
}

}  // namespace qk::workspace::glob_detail
