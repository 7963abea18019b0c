#include "qk/enforce/served_command.hpp"

#include <charconv>

#include <fmt/format.h>

#include "qk/util/printable.hpp"

namespace qk::enforce {
namespace {

constexpr std::string_view kMagic = "qk-serve 1 ";
// Far above any environment and command line a kernel takes (ARG_MAX and MAX_ARG_STRLEN): a header naming
// more is not one of ours.
constexpr std::size_t kMaxBody = std::size_t{64} << 20;

template <typename T>
std::optional<T> number(std::string_view s)
{
    T v{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

// Fields of the body, each ended by a NUL (no field of a command line or environment holds one).
class Fields {
public:
    explicit Fields(std::string_view body) : rest_(body) {}
    std::optional<std::string_view> next()
    {
        std::size_t nul = rest_.find('\0');
        if (nul == std::string_view::npos)
            return std::nullopt;
        std::string_view field = rest_.substr(0, nul);
        rest_.remove_prefix(nul + 1);
        return field;
    }
    bool done() const { return rest_.empty(); }

private:
    std::string_view rest_;
};

void put(std::string& out, std::string_view field)
{
    out.append(field);
    out.push_back('\0');
}

bool read_list(Fields& f, std::vector<std::string>& list)
{
    auto count = f.next();
    auto n = count ? number<std::size_t>(*count) : std::nullopt;
    if (!n)
        return false;
    for (std::size_t i = 0; i < *n; ++i) {
        auto field = f.next();
        if (!field)
            return false;
        list.emplace_back(*field);
    }
    return true;
}

}  // namespace

std::string served_header(std::size_t body_length)
{
    return fmt::format("{}{}\n", kMagic, body_length);
}

Result<std::size_t> parse_served_header(std::string_view header)
{
    if (!header.starts_with(kMagic) || !header.ends_with('\n'))
        return error("the request is not qk-sandbox-exec's (version 1): qk and its qk-sandbox-exec differ; install "
                     "them together, or unset QK_SANDBOX_EXEC");
    auto length = number<std::size_t>(header.substr(kMagic.size(), header.size() - kMagic.size() - 1));
    if (!length || *length > kMaxBody)
        return error("the request's header names no length qk-sandbox-exec can take");
    return *length;
}

std::string encode_body(const ServedCommand& command)
{
    std::string out;
    put(out, command.cwd);
    put(out, command.own_process_group ? "1" : "0");
    put(out, std::to_string(command.argv.size()));
    for (const auto& a : command.argv)
        put(out, a);
    put(out, std::to_string(command.env.size()));
    for (const auto& e : command.env)
        put(out, e);
    return out;
}

Result<ServedCommand> decode_served_command(std::string_view body)
{
    ServedCommand c;
    Fields f(body);
    auto cwd = f.next();
    auto group = f.next();
    if (!cwd || !group || cwd->empty() || cwd->front() != '/' || (*group != "0" && *group != "1"))
        return error("the request's working directory or process group is not one qk-sandbox-exec can read");
    c.cwd = std::string(*cwd);
    c.own_process_group = *group == "1";
    if (!read_list(f, c.argv) || c.argv.empty())
        return error("the request's command line is cut short or empty");
    if (!read_list(f, c.env) || !f.done())
        return error("the request's environment is cut short or followed by more");
    return c;
}

std::string encode_answer(const ServedAnswer& answer)
{
    switch (answer.kind) {
    case ServedAnswer::Kind::started: return fmt::format("started {}\n", answer.value);
    case ServedAnswer::Kind::refused: return fmt::format("refused {} {}\n", answer.value, answer.step);
    case ServedAnswer::Kind::ended: return fmt::format("ended {}\n", answer.value);
    case ServedAnswer::Kind::failed: return fmt::format("failed {}\n", answer.value);
    }
    return {};
}

Result<std::optional<ServedAnswer>> take_answer(std::string& buffer)
{
    std::size_t nl = buffer.find('\n');
    if (nl == std::string::npos)
        return std::optional<ServedAnswer>();
    const std::string line = buffer.substr(0, nl);
    buffer.erase(0, nl + 1);
    std::vector<std::string_view> words;
    for (std::string_view rest = line; !rest.empty();) {
        std::size_t space = rest.find(' ');
        words.push_back(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    ServedAnswer a;
    std::optional<long> value = words.size() >= 2 ? number<long>(words[1]) : std::nullopt;
    bool known = true;
    if (words.size() == 2 && words[0] == "started") {
        a.kind = ServedAnswer::Kind::started;
    } else if (words.size() == 3 && words[0] == "refused") {
        a.kind = ServedAnswer::Kind::refused;
        a.step = std::string(words[2]);
    } else if (words.size() == 2 && words[0] == "ended") {
        a.kind = ServedAnswer::Kind::ended;
    } else if (words.size() == 2 && words[0] == "failed") {
        a.kind = ServedAnswer::Kind::failed;
    } else {
        known = false;
    }
    if (!known || !value)
        return error(fmt::format("qk-sandbox-exec --serve answered a line qk cannot read: '{}'", printable(line)));
    a.value = *value;
    return std::optional<ServedAnswer>(a);
}

}  // namespace qk::enforce
