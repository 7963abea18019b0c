// A recursive-descent parser for glob bodies. Where globset and Nx's extglob parser decide what a character
// means, this follows them: `\` escapes anything; a class's first `]` and a first or last `-` are members, no
// escapes inside a class; `,` is literal outside braces and `|` outside groups; a stray `)` is literal
// (nrwl/nx glob_parser.rs `paren)/x.ts`), a stray `}` is an error (globset UnopenedAlternates); `?`, `+`, `@`,
// `!`, `*` begin a group only right before `(`, and `(…)` alone is a group (Nx's NonSpecialGroup).
#include "glob_syntax.hpp"

#include "glob_utf8.hpp"

namespace qk::workspace::glob_detail {

namespace {

enum class Ctx { top, brace, group };

class Parser {
public:
    Parser(std::string_view s, size_t base) : s_(s), base_(base) {}

    bool run(Items& out, SyntaxError& err)
    {
        out = seq(Ctx::top);
        if (failed_) {
            err = err_;
            return false;
        }
        return true;
    }

private:
    std::string_view s_;
    size_t base_;
    size_t i_ = 0;
    int group_depth_ = 0;
    bool failed_ = false;
    SyntaxError err_;

    void fail(size_t at, std::string what)
    {
        if (!failed_)
            err_ = SyntaxError{base_ + at, std::move(what)};
        failed_ = true;
        i_ = s_.size();
    }

    static void push_literal(Items& out, std::string_view text, size_t at)
    {
        if (!out.empty() && out.back().kind == Item::Kind::literal) {
            out.back().text += text;
            return;
        }
        Item it;
        it.kind = Item::Kind::literal;
        it.text = std::string(text);
        it.offset = at;
        out.push_back(std::move(it));
    }

    Item simple(Item::Kind kind, size_t at)
    {
        Item it;
        it.kind = kind;
        it.offset = base_ + at;
        return it;
    }

    Items seq(Ctx ctx)
    {
        Items out;
        while (i_ < s_.size() && !failed_) {
            char c = s_[i_];
            if (ctx == Ctx::brace && (c == ',' || c == '}'))
                break;
            if (ctx == Ctx::group && (c == '|' || c == ',' || c == ')'))
                break;
            bool opens_group = i_ + 1 < s_.size() && s_[i_ + 1] == '(';
            switch (c) {
            case '\\': {
                if (i_ + 1 >= s_.size())
                    return fail(i_, "'\\' at the end escapes nothing (write \\\\ for a literal '\\')"), out;
                if (s_[i_ + 1] == '/') {
                    ++i_;  // an escaped '/' is still the separator, as in globset
                    continue;
                }
                size_t len = utf8_length(s_, i_ + 1);
                push_literal(out, s_.substr(i_ + 1, len), base_ + i_);
                i_ += 1 + len;
                break;
            }
            case '[': out.push_back(cls()); break;
            case '{': out.push_back(brace()); break;
            case '}': return fail(i_, "'}' closes no '{' (write \\} for a literal '}')"), out;
            case '/':
                if (group_depth_ > 0)
                    return fail(i_, "'/' inside a group: a group's alternatives are parts of one path component"), out;
                out.push_back(simple(Item::Kind::sep, i_++));
                break;
            case '(': out.push_back(group(Item::Group::plain, i_, i_ + 1)); break;
            case '?':
                if (opens_group)
                    out.push_back(group(Item::Group::zero_or_one, i_, i_ + 2));
                else
                    out.push_back(simple(Item::Kind::any, i_++));
                break;
            case '*': {
                if (opens_group) {
                    out.push_back(group(Item::Group::zero_or_more, i_, i_ + 2));
                    break;
                }
                Item star = simple(Item::Kind::star, i_);
                while (i_ < s_.size() && s_[i_] == '*' && !(i_ + 1 < s_.size() && s_[i_ + 1] == '(')) {
                    ++star.stars;
                    ++i_;
                }
                out.push_back(std::move(star));
                break;
            }
            case '+':
            case '@':
            case '!':
                if (opens_group) {
                    auto kind = c == '+'   ? Item::Group::one_or_more
                                : c == '@' ? Item::Group::exact_one
                                           : Item::Group::negated;
                    out.push_back(group(kind, i_, i_ + 2));
                    break;
                }
                [[fallthrough]];
            default: push_literal(out, s_.substr(i_, 1), base_ + i_), ++i_;
            }
        }
        return out;
    }

    Item brace()
    {
        Item it = simple(Item::Kind::brace, i_);
        size_t start = i_++;
        // `{,a}`: Nx reads a leading empty alternative as "optional" (brace_group_with_empty_item); globset
        // drops every other empty alternative (empty_alternates is off).
        bool keep_leading_empty = i_ < s_.size() && s_[i_] == ',';
        for (bool first = true;; first = false) {
            Items alt = seq(Ctx::brace);
            if (failed_)
                return it;
            if (i_ >= s_.size())
                return fail(start, "'{' is never closed by '}' (write \\{ for a literal '{')"), it;
            if (!alt.empty() || (first && keep_leading_empty))
                it.alts.push_back(std::move(alt));
            if (s_[i_++] == '}')
                break;
        }
        if (it.alts.empty())
            it.alts.emplace_back();  // `{}` matches the empty string, as in globset
        return it;
    }

    Item group(Item::Group kind, size_t start, size_t body)
    {
        Item it = simple(Item::Kind::group, start);
        it.group = kind;
        i_ = body;
        ++group_depth_;
        for (;;) {
            Items alt = seq(Ctx::group);
            if (failed_)
                break;
            if (i_ >= s_.size()) {
                fail(start, "'" + std::string(s_.substr(start, body - start)) +
                                "' opens a group that is never closed by ')' (write \\( for a literal '(')");
                break;
            }
            it.alts.push_back(std::move(alt));
            if (s_[i_++] == ')')
                break;
        }
        --group_depth_;
        return it;
    }

    Item cls()
    {
        Item it = simple(Item::Kind::cls, i_);
        size_t start = i_++;
        if (i_ < s_.size() && (s_[i_] == '!' || s_[i_] == '^')) {
            it.cls.negated = true;
            ++i_;
        }
        std::vector<std::pair<char32_t, char32_t>> ranges;
        bool first = true, in_range = false;
        size_t lo_at = i_;
        for (;;) {
            if (i_ >= s_.size())
                return fail(start, "'[' opens a class that is never closed by ']' (write \\[ for a literal '[')"), it;
            size_t at = i_;
            auto [c, len] = utf8_decode(s_, i_);
            i_ += len;
            if (c == ']' && !first)
                break;
            if (c == '/')
                return fail(at, "a class cannot match '/': it matches one character of a name"), it;
            if (c == '-' && !first && !in_range) {
                in_range = true;
            } else if (in_range) {
                if (c < ranges.back().first)
                    return fail(lo_at, "the range in the class is reversed (write it low-high, as in [a-z])"), it;
                ranges.back().second = c;
                in_range = false;
            } else {
                ranges.emplace_back(c, c);
                lo_at = at;
            }
            first = false;
        }
        if (in_range)
            ranges.emplace_back('-', '-');
        for (auto [lo, hi] : ranges)
            it.cls.add(lo, hi);
        return it;
    }
};

bool has_sep(const Items& items)
{
    for (const Item& it : items) {
        if (it.kind == Item::Kind::sep)
            return true;
        if (it.kind == Item::Kind::brace)
            for (const Items& alt : it.alts)
                if (has_sep(alt))
                    return true;
    }
    return false;
}

}  // namespace

bool parse_items(std::string_view body, size_t base, Items& out, SyntaxError& err)
{
    return Parser(body, base).run(out, err);
}

// Braces whose alternatives hold '/' become separate patterns, so every pattern splits into components.
bool expand_slash_braces(const Items& seq, std::vector<Items>& out)
{
    std::vector<Items> acc(1);
    for (const Item& it : seq) {
        if (it.kind != Item::Kind::brace || !has_sep({it})) {
            for (Items& a : acc)
                a.push_back(it);
            continue;
        }
        std::vector<Items> options;
        for (const Items& alt : it.alts)
            if (!expand_slash_braces(alt, options))
                return false;
        if (acc.size() * options.size() > kMaxAlternatives)
            return false;
        std::vector<Items> next;
        for (const Items& a : acc)
            for (const Items& o : options) {
                Items joined = a;
                joined.insert(joined.end(), o.begin(), o.end());
                next.push_back(std::move(joined));
            }
        acc = std::move(next);
    }
    out.insert(out.end(), std::make_move_iterator(acc.begin()), std::make_move_iterator(acc.end()));
    return out.size() <= kMaxAlternatives;
}

std::vector<Items> split_components(const Items& seq)
{
    std::vector<Items> comps(1);
    for (const Item& it : seq) {
        if (it.kind == Item::Kind::sep)
            comps.emplace_back();
        else
            comps.back().push_back(it);
    }
    return comps;
}

bool is_literal_syntax(const Items& items)
{
    for (const Item& it : items)
        if (it.kind != Item::Kind::literal && it.kind != Item::Kind::sep)
            return false;
    return !items.empty() && items.back().kind != Item::Kind::sep;
}

}  // namespace qk::workspace::glob_detail
