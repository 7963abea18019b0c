// Nx's extglob rewrite, as nrwl/nx packages/nx/src/native/glob/glob_transform.rs (convert_glob, build_segment)
// performs it, over a syntax tree instead of text:
//
// * A pattern is split into path components. In each component, `@(a|b)`, `+(a|b)` and `(a|b)` are one of the
//   alternatives (exactly once: Nx prints them as `{a,b}`), `?(a|b)` is that or nothing, and `*(a|b)` in the
//   last component is that or nothing; in a directory component its "nothing" branch becomes `*` for the whole
//   text before it (Nx's ZeroOrMore).
// * `!(a|b)` branches: the "off" branch matches `*` in a directory component (or nothing in the last one; `*.`
//   when a '.' follows, Nx's NegatedFileName; `*` when a '*' follows, Nx's NegatedWildcard), the "on" branch
//   puts `{a,b}` there and makes the whole alternative an exclusion. An exclusion chosen in a directory
//   component excludes that directory's whole tree (`!dist/{cache,cache2}/`), whatever follows.
// * The alternatives of every component multiply out; an alternative is negative when it chose an exclusion,
//   or when the whole pattern is negated (`!a/!(b)` excludes both `a/*` and `a/b/`, as in Nx).
//
// Where qk departs from Nx (on patterns Nx's parser reads by accident, not by design): `*(` always opens a
// group (Nx reads `x*(y)` as `x*` then `(y)`); groups nest (Nx's group ends at the first `)`), and a `!(…)`
// nested inside another group or a brace keeps bash's meaning; braces holding '/' are expanded first, as
// globset would match them. docs: include/qk/workspace/glob.hpp.
#include "glob_convert.hpp"

#include <mutex>
#include <set>
#include <unordered_map>

#include "glob_print.hpp"
#include "glob_syntax.hpp"
#include "glob_utf8.hpp"

namespace qk::workspace::glob_detail {

namespace {

struct Variant {
    Nodes nodes;
    bool negative = false;
    bool globstar = false;
};

Node simple_node(Node::Kind kind, std::string text = {})
{
    Node n;
    n.kind = kind;
    n.text = std::move(text);
    return n;
}

Node to_node(const Item& it);

Nodes to_nodes(const Items& items)
{
    Nodes out;
    for (const Item& it : items)
        out.push_back(to_node(it));
    return out;
}

Node alt_node(const Item& it, bool with_empty, Node::Kind kind = Node::Kind::alt)
{
    Node n = simple_node(kind);
    if (with_empty)
        n.alts.emplace_back();
    for (const Items& alt : it.alts)
        n.alts.push_back(to_nodes(alt));
    return n;
}

// Inside a group or a brace nothing branches: optional groups gain an empty alternative, and `!(…)` is bash's.
Node to_node(const Item& it)
{
    switch (it.kind) {
    case Item::Kind::literal: return simple_node(Node::Kind::literal, it.text);
    case Item::Kind::sep: return simple_node(Node::Kind::literal, "/");  // braces holding '/' are expanded first
    case Item::Kind::any: return simple_node(Node::Kind::any);
    case Item::Kind::star: return simple_node(Node::Kind::star);
    case Item::Kind::cls: {
        Node n = simple_node(Node::Kind::cls);
        n.cls = it.cls;
        return n;
    }
    case Item::Kind::brace: return alt_node(it, false);
    case Item::Kind::group: break;
    }
    switch (it.group) {
    case Item::Group::zero_or_one:
    case Item::Group::zero_or_more: return alt_node(it, true);
    case Item::Group::negated:
    case Item::Group::negated_file:
    case Item::Group::negated_wild: return alt_node(it, false, Node::Kind::neg);
    default: return alt_node(it, false);
    }
}

Nodes plus(Nodes base, std::initializer_list<const Node*> more)
{
    for (const Node* n : more)
        base.push_back(*n);
    return base;
}

// Nx's build_segment: the variants of one component, each with its sign.
void build(const Items& parts, size_t i, Nodes existing, bool last, bool neg, std::vector<Variant>& out)
{
    const Node star = simple_node(Node::Kind::star);
    const Node dot = simple_node(Node::Kind::literal, ".");
    for (; i < parts.size() && out.size() <= kMaxAlternatives; ++i) {
        const Item& p = parts[i];
        if (p.kind != Item::Kind::group) {
            existing.push_back(to_node(p));
            continue;
        }
        switch (p.group) {
        case Item::Group::plain:
        case Item::Group::exact_one:
        case Item::Group::one_or_more: existing.push_back(alt_node(p, false)); continue;
        case Item::Group::zero_or_one: existing.push_back(alt_node(p, true)); continue;
        case Item::Group::zero_or_more:
            if (last) {
                existing.push_back(alt_node(p, true));
            } else {
                build(parts, i + 1, Nodes{star}, last, neg, out);
                existing.push_back(alt_node(p, false));
            }
            continue;
        case Item::Group::negated:
        case Item::Group::negated_file:
        case Item::Group::negated_wild: break;
        }
        Node group = alt_node(p, false);
        if (p.group == Item::Group::negated_file) {
            build(parts, i + 1, Nodes{star, dot}, last, neg, out);
            build(parts, i + 1, plus(std::move(existing), {&group, &dot}), last, true, out);
        } else if (p.group == Item::Group::negated_wild) {
            build(parts, i + 1, Nodes{star}, last, neg, out);
            build(parts, i + 1, plus(std::move(existing), {&group, &star}), last, true, out);
        } else {
            build(parts, i + 1, last ? existing : Nodes{star}, last, neg, out);
            build(parts, i + 1, plus(std::move(existing), {&group}), last, true, out);
        }
        return;
    }
    out.push_back(Variant{std::move(existing), neg, false});
}

// `!(x).` and `!(x)*` at the top of a component are Nx's NegatedFileName and NegatedWildcard.
Items mark_negations(Items seg)
{
    for (size_t i = 0; i + 1 < seg.size(); ++i) {
        Item& g = seg[i];
        Item& next = seg[i + 1];
        if (g.kind != Item::Kind::group || g.group != Item::Group::negated)
            continue;
        if (next.kind == Item::Kind::literal && next.text.starts_with('.')) {
            g.group = Item::Group::negated_file;
            next.text.erase(0, 1);
            if (next.text.empty())
                seg.erase(seg.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        } else if (next.kind == Item::Kind::star) {
            g.group = Item::Group::negated_wild;
            if (--next.stars == 0)
                seg.erase(seg.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
    }
    return seg;
}

Error syntax_error(std::string_view pattern, const SyntaxError& e)
{
    size_t column = 1;
    for (size_t i = 0; i < e.offset && i < pattern.size(); i += utf8_length(pattern, i))
        ++column;
    return error("glob \"" + std::string(pattern) + "\": column " + std::to_string(column) + ": " + e.what);
}

// The alternatives of one brace-free pattern: Nx's convert_glob_segments.
bool convert(const Items& seq, bool negated, bool fileset_literal, std::vector<Alternative>& out,
             std::set<std::string>& seen)
{
    std::vector<Items> comps = split_components(seq);
    if (fileset_literal) {
        std::vector<Segment> segs;
        for (const Items& c : comps)
            segs.push_back(make_segment(to_nodes(c)));
        std::string text;
        for (size_t k = 0; k < comps.size(); ++k) {
            if (k > 0)
                text += '/';
            print_nodes(text, to_nodes(comps[k]));
        }
        std::string sign = negated ? "!" : "";
        auto tree = segs;
        tree.push_back(globstar_segment());
        out.push_back(make_alternative(std::move(segs), negated, sign + text));
        out.push_back(make_alternative(std::move(tree), negated, sign + text + "/**"));
        return true;
    }
    std::vector<std::vector<Variant>> per(comps.size());
    size_t total = 1;
    for (size_t k = 0; k < comps.size(); ++k) {
        bool last = k + 1 == comps.size();
        const Items& c = comps[k];
        if ((last && c.empty() && comps.size() > 1) ||
            (c.size() == 1 && c[0].kind == Item::Kind::star && c[0].stars == 2)) {
            per[k].push_back(Variant{{}, false, true});  // `**`, or a trailing '/' (Nx: `dir/` is `dir/**`)
        } else {
            build(mark_negations(c), 0, {}, last, false, per[k]);
        }
        total *= per[k].size();
        if (total > kMaxAlternatives)
            return false;
    }
    std::vector<size_t> choice(per.size(), 0);
    for (size_t n = 0; n < total; ++n) {
        std::vector<Segment> segs;
        std::string text;
        bool negative = false, subtree = false;
        for (size_t k = 0; k < per.size(); ++k) {
            const Variant& v = per[k][choice[k]];
            if (k > 0)
                text += '/';
            if (v.globstar) {
                text += "**";
                segs.push_back(globstar_segment());
            } else {
                std::string part;
                print_nodes(part, v.nodes, 0);
                text += part;
                segs.push_back(make_segment(v.nodes));
            }
            if (v.negative) {
                negative = true;
                subtree = k + 1 < per.size();
                break;
            }
        }
        if (subtree) {
            text += "/";
            segs.push_back(globstar_segment());
        }
        negative = negative || negated;
        if (negative)
            text.insert(0, "!");
        if (seen.insert(text).second)
            out.push_back(make_alternative(std::move(segs), negative, std::move(text)));
        for (size_t k = per.size(); k-- > 0;) {
            if (++choice[k] < per[k].size())
                break;
            choice[k] = 0;
        }
    }
    return true;
}

}  // namespace

std::string common_prefix(std::string_view a, std::string_view b)
{
    size_t i = 0, last_end = 0;
    while (true) {
        size_t ea = a.find('/', i), eb = b.find('/', i);
        ea = ea == std::string_view::npos ? a.size() : ea;
        eb = eb == std::string_view::npos ? b.size() : eb;
        if (ea != eb || a.substr(i, ea - i) != b.substr(i, eb - i))
            break;
        last_end = ea;
        if (ea == a.size() || eb == b.size())
            break;
        i = ea + 1;
    }
    return std::string(a.substr(0, last_end));
}

namespace {

// Compiled globs are immutable: one pattern compiled twice in a run (a project's "**/*" in its default
// and production inputs, an output pattern as a glob and as a fileset, each time a task's outputs are
// walked) shares one. Bounded, so that a long-lived caller (a fuzzer) cannot grow it without end.
class CompileMemo {
public:
    std::shared_ptr<const Compiled> find(std::string_view pattern, bool fileset)
    {
        std::lock_guard lock(mutex_);
        auto it = map_[fileset].find(pattern);
        return it == map_[fileset].end() ? nullptr : it->second;
    }
    void add(std::shared_ptr<const Compiled> c, bool fileset)
    {
        // Only what configurations hold: short patterns of a few alternatives. A fuzzer's inputs, or a
        // brace expression standing for thousands of paths, are compiled each time rather than kept.
        if (c->pattern.size() > kMaxPattern || c->alternatives.size() > kMaxKeptAlternatives)
            return;
        std::lock_guard lock(mutex_);
        if (map_[0].size() + map_[1].size() >= kMaxEntries) {
            map_[0].clear();
            map_[1].clear();
        }
        std::string_view key = c->pattern;  // points into the entry it keys, which it keeps alive
        map_[fileset].emplace(key, std::move(c));
    }

private:
    static constexpr std::size_t kMaxEntries = 1 << 15, kMaxPattern = 256, kMaxKeptAlternatives = 8;
    std::mutex mutex_;
    std::unordered_map<std::string_view, std::shared_ptr<const Compiled>> map_[2];
};

CompileMemo& memo()
{
    static CompileMemo m;
    return m;
}

Result<std::shared_ptr<const Compiled>> compile_uncached(std::string_view pattern, bool fileset);

}  // namespace

Result<std::shared_ptr<const Compiled>> compile_glob(std::string_view pattern, bool fileset)
{
    if (auto hit = memo().find(pattern, fileset))
        return hit;
    QK_TRY(compiled, compile_uncached(pattern, fileset));
    memo().add(*compiled, fileset);
    return compiled;
}

namespace {

Result<std::shared_ptr<const Compiled>> compile_uncached(std::string_view pattern, bool fileset)
{
    auto c = std::make_shared<Compiled>();
    c->pattern = std::string(pattern);
    c->negated = !pattern.empty() && pattern[0] == '!' && !(pattern.size() > 1 && pattern[1] == '(');
    size_t base = c->negated ? 1 : 0;
    Items items;
    SyntaxError err;
    if (!parse_items(pattern.substr(base), base, items, err))
        return syntax_error(pattern, err);
    const bool plain = is_literal_syntax(items);
    c->names_path = plain && !c->negated;
    bool fileset_literal = fileset && plain;
    std::vector<Items> expanded;
    std::set<std::string> seen;
    bool ok = expand_slash_braces(items, expanded);
    for (size_t i = 0; ok && i < expanded.size(); ++i)
        ok = convert(expanded[i], c->negated, fileset_literal, c->alternatives, seen) &&
             c->alternatives.size() <= kMaxAlternatives;
    if (!ok)
        return syntax_error(pattern,
                            SyntaxError{0, "the pattern stands for more than " + std::to_string(kMaxAlternatives) +
                                               " alternatives; split it into several patterns"});
    bool first = true;
    for (const Alternative& a : c->alternatives) {
        if (a.negative || c->negated)
            continue;
        c->prefix = first ? a.prefix : common_prefix(c->prefix, a.prefix);
        first = false;
    }
    c->literal = c->alternatives.size() == 1 && !c->alternatives[0].negative &&
                 c->alternatives[0].shape == Alternative::Shape::exact;
    return std::shared_ptr<const Compiled>(std::move(c));
}

}  // namespace

}  // namespace qk::workspace::glob_detail
