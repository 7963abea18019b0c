// Matching one path component. A segment with no group (the usual case) is matched by the linear greedy
// wildcard algorithm after quick rejects on its literal ends; one whose groups multiply out to at most 32
// group-free segments tries those whose last byte fits; the rest search with continuations, each state once.
// Only that search allocates: its memo past a few hundred states, and where `!(…)` groups can end.
#include "glob_match.hpp"

#include <unordered_map>

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

// A bit set that lives inline while small: most memos are a few hundred bits.
class Bits {
public:
    explicit Bits(size_t bits)
    {
        if (bits > kInline * 64)
            heap_.assign((bits + 63) / 64, 0);
    }
    bool test(size_t i) const { return (data()[i >> 6] >> (i & 63)) & 1; }
    void set(size_t i) { data()[i >> 6] |= uint64_t{1} << (i & 63); }

private:
    static constexpr size_t kInline = 8;
    const uint64_t* data() const { return heap_.empty() ? inline_ : heap_.data(); }
    uint64_t* data() { return heap_.empty() ? inline_ : heap_.data(); }
    uint64_t inline_[kInline] = {};
    std::vector<uint64_t> heap_;
};

// One component being matched. Where a `!(…)` group's alternatives can end, from a given start, is found
// once and kept: nested groups would otherwise find it again for every start of every enclosing one.
struct Subject {
    std::string_view s;
    size_t width;                                // positions 0..s.size()
    std::unordered_map<size_t, Bits> neg_ends;  // by neg id * width + start
};

// A search over (node, position) states. A node's continuation is fixed by where it sits in the tree (and
// no node is reached again from its own continuation), so a state visited once and not matched cannot match
// later: visiting each state once keeps the search polynomial where plain backtracking is exponential
// (`{a,b,…}*a*a*a*b` against "aaaa…"). Only branching states (star, alt, neg) are recorded.
struct Search {
    Subject& subject;
    uint32_t first;  // the node ids this search meets: [first, first + count)
    Bits visited;
    Bits* ends;  // enumerating a `!(…)` group's alternatives: where one ends; nullptr: the whole component

    Search(Subject& sub, uint32_t first_id, uint32_t count, Bits* ends_out)
        : subject(sub), first(first_id), visited(size_t{count} * sub.width), ends(ends_out)
    {
    }
    // Marks the state; false when it was already visited.
    bool visit(const Node* n, size_t i)
    {
        size_t bit = size_t{n->id - first} * subject.width + i;
        if (visited.test(bit))
            return false;
        visited.set(bit);
        return true;
    }
};

bool match_rec(Search& sx, const Node* n, const Node* end, size_t i, const Cont* k);

// Where an alternative of the `!(…)` group `neg` can end when started at `i` (bash's meaning: the group
// takes any text none of them matches whole).
const Bits& neg_ends(Subject& sub, const Node& neg, size_t i)
{
    size_t key = size_t{neg.id} * sub.width + i;
    if (auto it = sub.neg_ends.find(key); it != sub.neg_ends.end())
        return it->second;
    Bits ends(sub.width);
    Search inner(sub, neg.id + 1, neg.subtree_end - neg.id - 1, &ends);
    for (const Nodes& alt : neg.alts)
        (void)match_rec(inner, alt.data(), alt.data() + alt.size(), i, nullptr);
    return sub.neg_ends.emplace(key, std::move(ends)).first->second;
}

bool match_rec(Search& sx, const Node* n, const Node* end, size_t i, const Cont* k)
{
    std::string_view s = sx.subject.s;
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
            if (next == end && k == nullptr && sx.ends == nullptr)
                return true;  // a trailing star takes the rest of the component
            // (star, j) stands for the rest tried at every position from j on: one visited ends the loop.
            for (size_t j = i; sx.visit(n, j); j += utf8_length(s, j)) {
                if (match_rec(sx, next, end, j, k))
                    return true;
                if (j >= s.size())
                    break;
            }
            return false;
        }
        case Node::Kind::alt: {
            if (!sx.visit(n, i))
                return false;
            Cont after{n + 1, end, k};
            for (const Nodes& alt : n->alts)
                if (match_rec(sx, alt.data(), alt.data() + alt.size(), i, &after))
                    return true;
            return false;
        }
        case Node::Kind::neg: {
            if (!sx.visit(n, i))
                return false;
            // Any text from i to j that none of the alternatives matches whole, then the rest.
            const Bits& taken = neg_ends(sx.subject, *n, i);
            for (size_t j = i;; j += utf8_length(s, j)) {
                if (!taken.test(j) && match_rec(sx, n + 1, end, j, k))
                    return true;
                if (j >= s.size())
                    return false;
            }
        }
        }
    }
    if (k != nullptr)
        return match_rec(sx, k->begin, k->end, i, k->next);
    if (sx.ends != nullptr) {
        sx.ends->set(i);
        return false;  // enumerating: go on to every other end
    }
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
        Subject subject{c, c.size() + 1, {}};
        Search search(subject, 0, seg.node_count, nullptr);
        return match_rec(search, seg.nodes.data(), seg.nodes.data() + seg.nodes.size(), 0, nullptr);
    }
    return false;
}

}  // namespace qk::workspace::glob_detail
