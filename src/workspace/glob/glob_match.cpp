// Matching one path component. A segment with no group (the usual case) is matched by the linear greedy
// wildcard algorithm after quick rejects on its literal ends; one whose groups multiply out to at most 32
// group-free segments tries those whose last byte fits; the rest backtrack with continuations. Nothing here
// allocates.
#include "glob_match.hpp"

#include "glob_utf8.hpp"

namespace qk::workspace::glob_detail {

namespace {

constexpr size_t npos = std::string_view::npos;

// `s` holds `t` at `pos` (which the caller keeps in range). Names are short: a loop beats a memcmp call.
inline bool has_at(std::string_view s, size_t pos, const std::string& t)
{
    for (size_t k = 0; k < t.size(); ++k)
        if (s[pos + k] != t[k])
            return false;
    return true;
}

// The greedy wildcard algorithm over literal/any/cls/star nodes: on a mismatch, only the last star grows.
bool match_simple(const Node* nodes, size_t count, std::string_view s)
{
    size_t ni = 0, si = 0;
    size_t star_ni = npos, star_si = 0;
    while (ni < count || si < s.size()) {
        if (ni < count) {
            const Node& n = nodes[ni];
            switch (n.kind) {
            case Node::Kind::star:
                star_ni = ni++;
                star_si = si;
                continue;
            case Node::Kind::literal:
                if (s.size() - si >= n.text.size() && s.compare(si, n.text.size(), n.text) == 0) {
                    si += n.text.size();
                    ++ni;
                    continue;
                }
                break;
            case Node::Kind::any:
                if (si < s.size()) {
                    si += utf8_length(s, si);
                    ++ni;
                    continue;
                }
                break;
            case Node::Kind::cls:
                if (si < s.size()) {
                    auto [c, len] = utf8_decode(s, si);
                    if (n.cls.contains(c)) {
                        si += len;
                        ++ni;
                        continue;
                    }
                }
                break;
            default: return false;  // not simple: never reached
            }
        }
        if (star_ni == npos || star_si >= s.size())
            return false;
        if (star_ni + 1 < count && nodes[star_ni + 1].kind == Node::Kind::literal) {
            // Only where the literal after the star occurs can the match go on.
            star_si = s.find(nodes[star_ni + 1].text, star_si + 1);
            if (star_si == npos)
                return false;
        } else {
            star_si += utf8_length(s, star_si);
        }
        si = star_si;
        ni = star_ni + 1;
    }
    return true;
}

// What is left to match after a group: the rest of the enclosing sequence, then the rest of its enclosing one.
struct Cont {
    const Node* begin;
    const Node* end;
    const Cont* next;
};

bool match_rec(const Node* n, const Node* end, std::string_view s, size_t i, const Cont* k);

bool any_alt_matches_whole(const Node& group, std::string_view text)
{
    for (const Nodes& alt : group.alts)
        if (match_rec(alt.data(), alt.data() + alt.size(), text, 0, nullptr))
            return true;
    return false;
}

bool match_rec(const Node* n, const Node* end, std::string_view s, size_t i, const Cont* k)
{
    for (; n != end; ++n) {
        switch (n->kind) {
        case Node::Kind::literal:
            if (s.size() - i < n->text.size() || s.compare(i, n->text.size(), n->text) != 0)
                return false;
            i += n->text.size();
            break;
        case Node::Kind::any:
            if (i >= s.size())
                return false;
            i += utf8_length(s, i);
            break;
        case Node::Kind::cls: {
            if (i >= s.size())
                return false;
            auto [c, len] = utf8_decode(s, i);
            if (!n->cls.contains(c))
                return false;
            i += len;
            break;
        }
        case Node::Kind::star: {
            const Node* next = n + 1;
            if (next == end && k == nullptr)
                return true;  // a trailing star takes the rest of the component
            for (size_t j = i;; j += utf8_length(s, j)) {
                if (match_rec(next, end, s, j, k))
                    return true;
                if (j >= s.size())
                    return false;
            }
        }
        case Node::Kind::alt: {
            Cont after{n + 1, end, k};
            for (const Nodes& alt : n->alts)
                if (match_rec(alt.data(), alt.data() + alt.size(), s, i, &after))
                    return true;
            return false;
        }
        case Node::Kind::neg: {
            // Any text from i to j that none of the alternatives matches whole, then the rest.
            for (size_t j = i;; j += utf8_length(s, j)) {
                if (!any_alt_matches_whole(*n, s.substr(i, j - i)) && match_rec(n + 1, end, s, j, k))
                    return true;
                if (j >= s.size())
                    return false;
            }
        }
        }
    }
    if (k != nullptr)
        return match_rec(k->begin, k->end, s, i, k->next);
    return i == s.size();
}

}  // namespace

bool match_segment(const Segment& seg, std::string_view c)
{
    switch (seg.kind) {
    case Segment::Kind::literal: return c == seg.lead;
    case Segment::Kind::globstar: return true;
    case Segment::Kind::any_name: return true;
    case Segment::Kind::affix:
        return c.size() >= seg.lead.size() + seg.tail.size() && has_at(c, c.size() - seg.tail.size(), seg.tail) &&
               has_at(c, 0, seg.lead);
    case Segment::Kind::any_of: {
        uint32_t candidates = c.empty() ? ~uint32_t{0} : seg.by_last_byte[static_cast<unsigned char>(c.back())];
        for (size_t i = 0; candidates != 0 && i < seg.options.size(); ++i, candidates >>= 1)
            if ((candidates & 1) && match_segment(seg.options[i], c))
                return true;
        return false;
    }
    case Segment::Kind::pattern:
        if (seg.simple) {
            if (c.size() < seg.min_size || !has_at(c, 0, seg.lead) || !has_at(c, c.size() - seg.tail.size(), seg.tail))
                return false;
            return match_simple(seg.nodes.data(), seg.nodes.size(), c);
        }
        return match_rec(seg.nodes.data(), seg.nodes.data() + seg.nodes.size(), c, 0, nullptr);
    }
    return false;
}

}  // namespace qk::workspace::glob_detail
