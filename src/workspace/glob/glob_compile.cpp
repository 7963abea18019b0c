// Building matchers: classes, segments (picking the cheapest kind) and alternatives (picking a shape).
#include <algorithm>

#include "glob_match.hpp"

namespace qk::workspace::glob_detail {

void ClassSet::add(char32_t lo, char32_t hi)
{
    ranges.emplace_back(lo, hi);
    for (char32_t c = lo; c <= hi && c < 128; ++c)
        ascii[c >> 6] |= uint64_t{1} << (c & 63);
}

bool ClassSet::contains(char32_t c) const
{
    bool in = false;
    if (c < 128) {
        in = (ascii[c >> 6] >> (c & 63)) & 1;
    } else {
        in = std::any_of(ranges.begin(), ranges.end(), [c](const auto& r) { return r.first <= c && c <= r.second; });
    }
    return in != negated;
}

namespace {

// Splices single-alternative groups into their sequence and merges neighbouring literals and stars, so
// `(marketing)` is the literal `marketing` and `a**b` is `a*b`.
void flatten_into(Nodes& out, Nodes&& in)
{
    for (Node& n : in) {
        if (n.kind == Node::Kind::alt && n.alts.size() == 1) {
            flatten_into(out, std::move(n.alts[0]));
            continue;
        }
        if (n.kind == Node::Kind::alt || n.kind == Node::Kind::neg) {
            for (Nodes& alt : n.alts) {
                Nodes flat;
                flatten_into(flat, std::move(alt));
                alt = std::move(flat);
            }
        }
        if (n.kind == Node::Kind::literal && n.text.empty())
            continue;
        if (!out.empty() && n.kind == Node::Kind::literal && out.back().kind == Node::Kind::literal) {
            out.back().text += n.text;
            continue;
        }
        if (!out.empty() && n.kind == Node::Kind::star && out.back().kind == Node::Kind::star)
            continue;
        out.push_back(std::move(n));
    }
}

bool is_kind(const Node& n, Node::Kind k)
{
    return n.kind == k;
}

constexpr size_t kMaxOptions = 32;

// A sequence with groups as the group-free sequences it stands for; false when there would be too many, or a
// `!(…)` (which does not multiply out).
bool multiply_out(const Nodes& nodes, std::vector<Nodes>& out)
{
    std::vector<Nodes> acc(1);
    for (const Node& n : nodes) {
        if (n.kind == Node::Kind::neg)
            return false;
        if (n.kind != Node::Kind::alt) {
            for (Nodes& a : acc)
                a.push_back(n);
            continue;
        }
        std::vector<Nodes> options;
        for (const Nodes& alt : n.alts)
            if (!multiply_out(alt, options))
                return false;
        if (acc.size() * options.size() > kMaxOptions)
            return false;
        std::vector<Nodes> next;
        for (const Nodes& a : acc)
            for (const Nodes& o : options) {
                Nodes joined = a;
                joined.insert(joined.end(), o.begin(), o.end());
                next.push_back(std::move(joined));
            }
        acc = std::move(next);
    }
    out.insert(out.end(), std::make_move_iterator(acc.begin()), std::make_move_iterator(acc.end()));
    return out.size() <= kMaxOptions;
}

// Numbers nodes in pre-order, for the backtracking matcher's memo (glob_match.cpp).
void number_nodes(Nodes& nodes, uint32_t& next)
{
    for (Node& n : nodes) {
        n.id = next++;
        for (Nodes& alt : n.alts)
            number_nodes(alt, next);
        n.subtree_end = next;
    }
}

}  // namespace

Segment make_segment(Nodes nodes)
{
    Segment seg;
    flatten_into(seg.nodes, std::move(nodes));
    const Nodes& n = seg.nodes;
    auto lit = Node::Kind::literal;
    auto star = Node::Kind::star;
    if (n.empty() || (n.size() == 1 && is_kind(n[0], lit))) {
        seg.kind = Segment::Kind::literal;
        seg.lead = n.empty() ? std::string() : n[0].text;
    } else if (n.size() == 1 && is_kind(n[0], star)) {
        seg.kind = Segment::Kind::any_name;
    } else if (n.size() <= 3 &&
               std::count_if(n.begin(), n.end(), [&](const Node& x) { return is_kind(x, star); }) == 1 &&
               std::all_of(n.begin(), n.end(), [&](const Node& x) { return is_kind(x, star) || is_kind(x, lit); })) {
        seg.kind = Segment::Kind::affix;
        size_t at = 0;
        if (is_kind(n[0], lit))
            seg.lead = n[at++].text;
        ++at;  // the star
        if (at < n.size())
            seg.tail = n[at].text;
    } else {
        seg.kind = Segment::Kind::pattern;
        seg.simple = std::none_of(n.begin(), n.end(),
                                  [](const Node& x) { return x.kind == Node::Kind::alt || x.kind == Node::Kind::neg; });
    }
    std::vector<Nodes> options;
    if (seg.kind == Segment::Kind::pattern && !seg.simple && multiply_out(n, options)) {
        // Several group-free matchers with quick rejects beat backtracking through the groups.
        seg.kind = Segment::Kind::any_of;
        for (Nodes& o : options) {
            Segment option = make_segment(std::move(o));
            if (option.kind == Segment::Kind::any_name)
                return option;
            seg.options.push_back(std::move(option));
        }
        // An option with a literal tail can only match a name ending in its last byte; the others always run.
        seg.by_last_byte.assign(256, 0);
        for (size_t i = 0; i < seg.options.size(); ++i) {
            const Segment& o = seg.options[i];
            const std::string& tail = o.kind == Segment::Kind::literal ? o.lead : o.tail;
            if (!tail.empty()) {
                seg.by_last_byte[static_cast<unsigned char>(tail.back())] |= uint32_t{1} << i;
                continue;
            }
            for (uint32_t& mask : seg.by_last_byte)
                mask |= uint32_t{1} << i;
        }
    } else if (seg.kind == Segment::Kind::pattern && !seg.simple) {
        number_nodes(seg.nodes, seg.node_count);
    } else if (seg.kind == Segment::Kind::pattern && seg.simple) {
        if (is_kind(n.front(), lit))
            seg.lead = n.front().text;
        if (is_kind(n.back(), lit))
            seg.tail = n.back().text;
        for (const Node& x : n)
            seg.min_size += is_kind(x, lit) ? x.text.size() : is_kind(x, star) ? 0 : 1;
    }
    if (seg.kind != Segment::Kind::pattern)
        seg.nodes.clear();
    return seg;
}

Segment globstar_segment()
{
    Segment seg;
    seg.kind = Segment::Kind::globstar;
    return seg;
}

Alternative make_alternative(std::vector<Segment> segments, bool negative, std::string text)
{
    using K = Segment::Kind;
    Alternative alt;
    alt.negative = negative;
    alt.text = std::move(text);

    std::vector<Segment> segs;
    for (Segment& s : segments)
        if (!(s.kind == K::globstar && !segs.empty() && segs.back().kind == K::globstar))
            segs.push_back(std::move(s));
    if (segs.size() == 1 && segs[0].kind == K::globstar) {
        alt.shape = Alternative::Shape::all;
        return alt;
    }
    if (segs.size() > 1 && segs.back().kind == K::globstar) {
        // globset's `/**` at the end is "/.*": at least one more component, so `a/**` does not match `a`.
        Segment any;
        any.kind = K::any_name;
        segs.insert(segs.end() - 1, std::move(any));
    }
    size_t k = 0;
    for (; k < segs.size() && segs[k].kind == K::literal; ++k) {
        if (k > 0)
            alt.prefix += '/';
        alt.prefix += segs[k].lead;
    }
    alt.anchored = k > 0;
    alt.rest.assign(std::make_move_iterator(segs.begin() + k), std::make_move_iterator(segs.end()));
    const auto& r = alt.rest;
    if (r.empty())
        alt.shape = Alternative::Shape::exact;
    else if (r.size() == 2 && ((r[0].kind == K::any_name && r[1].kind == K::globstar) ||
                               (r[0].kind == K::globstar && r[1].kind == K::any_name)))
        alt.shape = Alternative::Shape::tree;
    else if (r.size() == 2 && r[0].kind == K::globstar && r[1].kind != K::globstar)
        alt.shape = Alternative::Shape::basename;
    else
        alt.shape = Alternative::Shape::general;
    return alt;
}

}  // namespace qk::workspace::glob_detail
