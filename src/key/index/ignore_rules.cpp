// gitignore semantics follow git's dir.c (parsing, basename vs pathname matching, the literal prefix
// compared before the glob) and wildmatch.c (including its early-abort results, which decide how far
// an outer `*` keeps trying), so that the result agrees with `git check-ignore` even on odd patterns
// such as `foo**/bar`, where git compares the literal "foo" first and so treats the `**` as leading.
#include "ignore_rules.hpp"

#include <cstring>

namespace qk::key {

namespace {

using Byte = unsigned char;

enum class Wild : std::uint8_t { match, no_match, abort_all, abort_to_starstar };

bool glob_special(Byte c)
{
    return c == '*' || c == '?' || c == '[' || c == '\\';
}

// The character classes of wildmatch, ASCII only (git's sane ctype: \v and \f are not space).
bool in_class(std::string_view name, Byte c, bool& known)
{
    known = true;
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    bool print = c >= 0x20 && c <= 0x7e;
    if (name == "alnum")
        return upper || lower || digit;
    if (name == "alpha")
        return upper || lower;
    if (name == "blank")
        return c == ' ' || c == '\t';
    if (name == "cntrl")
        return c < 0x20 || c == 0x7f;
    if (name == "digit")
        return digit;
    if (name == "graph")
        return print && c != ' ';
    if (name == "lower")
        return lower;
    if (name == "print")
        return print;
    if (name == "punct")
        return print && c != ' ' && !upper && !lower && !digit;
    if (name == "space")
        return space;
    if (name == "upper")
        return upper;
    if (name == "xdigit")
        return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    known = false;
    return false;
}

// One bracket expression starting after its '['; `p` is left on its closing ']'.
Wild bracket(const Byte*& p, const Byte* pe, Byte t)
{
    auto at = [&](const Byte* q) -> Byte { return q < pe ? *q : 0; };
    Byte pc = at(p);
    if (pc == '^')
        pc = '!';
    bool negated = pc == '!';
    if (negated)
        pc = at(++p);
    Byte prev = 0;
    bool matched = false;
    do {
        if (!pc)
            return Wild::abort_all;
        if (pc == '\\') {
            pc = at(++p);
            if (!pc)
                return Wild::abort_all;
            matched |= t == pc;
        } else if (pc == '-' && prev && at(p + 1) && at(p + 1) != ']') {
            pc = at(++p);
            if (pc == '\\') {
                pc = at(++p);
                if (!pc)
                    return Wild::abort_all;
            }
            matched |= t <= pc && t >= prev;
            pc = 0;  // a range's end cannot start another range
        } else if (pc == '[' && at(p + 1) == ':') {
            const Byte* s = p + 2;
            const Byte* q = s;
            while (q < pe && *q != ']')
                ++q;
            if (q == pe)
                return Wild::abort_all;
            if (q - s < 1 || q[-1] != ':') {
                matched |= t == '[';  // no ":]": the '[' is an ordinary member
            } else {
                bool known;
                matched |= in_class(std::string_view(reinterpret_cast<const char*>(s), q - s - 1), t, known);
                if (!known)
                    return Wild::abort_all;
                p = q;
                pc = 0;
            }
        } else {
            matched |= t == pc;
        }
        prev = pc;
        pc = at(++p);
    } while (pc != ']');
    return matched == negated || t == '/' ? Wild::no_match : Wild::match;
}

// `start` is where this pattern string began: a `**` only spans directories at its start or after a
// '/', and git judges "start" by the string handed to wildmatch.
Wild dowild(const Byte* p, const Byte* pe, const Byte* t, const Byte* te)
{
    const Byte* const start = p;
    for (; p < pe; ++p, ++t) {
        Byte pc = *p;
        if (t == te && pc != '*')
            return Wild::abort_all;
        Byte tc = t < te ? *t : 0;
        switch (pc) {
        case '\\':
            if (++p == pe || *p != tc)
                return Wild::no_match;
            break;
        case '?':
            if (tc == '/')
                return Wild::no_match;
            break;
        case '[': {
            ++p;
            Wild w = bracket(p, pe, tc);
            if (w != Wild::match)
                return w;
            break;
        }
        case '*': {
            bool match_slash = false;
            const Byte* first = p;
            while (p + 1 < pe && p[1] == '*')
                ++p;
            const Byte* rest = p + 1;
            if (p != first) {
                bool after_slash = first == start || first[-1] == '/';
                bool before_slash = rest == pe || *rest == '/' || (*rest == '\\' && rest + 1 < pe && rest[1] == '/');
                if (after_slash && before_slash) {
                    // "a/**/b" also matches "a/b": try the `**/` as matching nothing first.
                    if (rest < pe && *rest == '/' && dowild(rest + 1, pe, t, te) == Wild::match)
                        return Wild::match;
                    match_slash = true;
                }
            }
            if (rest == pe) {
                if (!match_slash && std::memchr(t, '/', te - t))
                    return Wild::abort_to_starstar;
                return Wild::match;
            }
            if (!match_slash && *rest == '/') {
                // A lone `*` before '/' can only run to the next '/'.
                const void* slash = std::memchr(t, '/', te - t);
                if (!slash)
                    return Wild::abort_all;
                t = static_cast<const Byte*>(slash);
                p = rest;
                break;
            }
            for (; t < te; ++t) {
                if (!glob_special(*rest)) {
                    // Skip ahead to the next occurrence of the literal that follows the star.
                    while (t < te && (match_slash || *t != '/') && *t != *rest)
                        ++t;
                    if (t == te || *t != *rest)
                        return Wild::no_match;
                }
                Wild w = dowild(rest, pe, t, te);
                if (w != Wild::no_match) {
                    if (!match_slash || w != Wild::abort_to_starstar)
                        return w;
                } else if (!match_slash && *t == '/') {
                    return Wild::abort_to_starstar;
                }
            }
            return Wild::abort_all;
        }
        default:
            if (tc != pc)
                return Wild::no_match;
        }
    }
    return t == te ? Wild::match : Wild::no_match;
}

std::size_t literal_length(std::string_view s)
{
    std::size_t i = 0;
    while (i < s.size() && !glob_special(static_cast<Byte>(s[i])))
        ++i;
    return i;
}

// git's trim_trailing_spaces: unescaped trailing spaces (not tabs) go.
void trim_trailing_spaces(std::string_view& line)
{
    std::size_t keep = line.size();
    bool in_spaces = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == ' ') {
            if (!in_spaces)
                keep = i;
            in_spaces = true;
        } else {
            if (line[i] == '\\' && ++i == line.size())
                return;
            in_spaces = false;
        }
    }
    if (in_spaces)
        line = line.substr(0, keep);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view text)
{
    auto p = reinterpret_cast<const Byte*>(pattern.data());
    auto t = reinterpret_cast<const Byte*>(text.data());
    return dowild(p, p + pattern.size(), t, t + text.size()) == Wild::match;
}

IgnoreFile IgnoreFile::parse(std::string_view text)
{
    IgnoreFile file;
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.empty() || line[0] == '#')
            continue;
        if (line.back() == '\r')
            line.remove_suffix(1);
        line = line.substr(0, line.find('\0'));  // git reads each line as a C string
        trim_trailing_spaces(line);

        Pattern pat;
        if (!line.empty() && line[0] == '!') {
            pat.negative = true;
            line.remove_prefix(1);
        }
        if (!line.empty() && line.back() == '/') {
            pat.dir_only = true;
            line.remove_suffix(1);
        }
        if (line.empty())
            continue;  // matches nothing in git either
        pat.basename_only = line.find('/') == std::string_view::npos;
        pat.literal = static_cast<std::uint32_t>(literal_length(line));
        pat.ends_with = line[0] == '*' && literal_length(line.substr(1)) == line.size() - 1;
        pat.text = std::string(line);
        file.patterns_.push_back(std::move(pat));
    }
    return file;
}

IgnoreFile::Verdict IgnoreFile::match(std::string_view path, std::string_view basename, bool is_dir) const
{
    for (auto it = patterns_.rbegin(); it != patterns_.rend(); ++it) {
        const Pattern& pat = *it;
        if (pat.dir_only && !is_dir)
            continue;
        std::string_view pattern = pat.text;
        bool hit;
        if (pat.basename_only) {
            if (pat.literal == pattern.size())
                hit = basename == pattern;
            else if (pat.ends_with)
                hit = basename.size() + 1 >= pattern.size() && basename.ends_with(pattern.substr(1));
            else
                hit = wildmatch(pattern, basename);
        } else {
            std::size_t literal = pat.literal;
            if (pattern[0] == '/') {
                pattern.remove_prefix(1);
                --literal;
            }
            // Like git, compare the literal prefix first and wildmatch only the rest.
            std::string_view name = path;
            if (literal > name.size() || name.substr(0, literal) != pattern.substr(0, literal))
                continue;
            pattern.remove_prefix(literal);
            name.remove_prefix(literal);
            hit = (pattern.empty() && name.empty()) || (!pattern.empty() && wildmatch(pattern, name));
        }
        if (hit)
            return pat.negative ? Verdict::keep : Verdict::ignore;
    }
    return Verdict::none;
}

void IgnoreStack::push(std::size_t base_len, Files files)
{
    levels_.push_back(Level{base_len, std::make_shared<const Files>(std::move(files))});
}

bool IgnoreStack::ignored(std::string_view path, std::string_view basename, bool is_dir) const
{
    for (std::size_t source = 0; source < ignore_source_count; ++source) {
        for (auto level = levels_.rbegin(); level != levels_.rend(); ++level) {
            const IgnoreFile& file = (*level->files)[source];
            if (file.empty())
                continue;
            auto verdict = file.match(path.substr(level->base_len), basename, is_dir);
            if (verdict != IgnoreFile::Verdict::none)
                return verdict == IgnoreFile::Verdict::ignore;
        }
    }
    return false;
}

}  // namespace qk::key
