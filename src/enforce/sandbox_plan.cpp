// The plan and result files between qk and qk-sandbox-exec: a version line, then one record a line,
// tab-separated, paths escaped so that any byte but NUL may appear in them.
#include "qk/enforce/sandbox_plan.hpp"

#include <charconv>

#include <fmt/format.h>

namespace qk::enforce {
namespace {

constexpr std::string_view kPlanVersion = "qk-sandbox-plan 1";
constexpr std::string_view kResultVersion = "qk-sandbox-result 1";

std::string escape(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        default: out += c;
        }
    }
    return out;
}

std::optional<std::string> unescape(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            out += s[i];
            continue;
        }
        if (++i == s.size())
            return std::nullopt;
        switch (s[i]) {
        case '\\': out += '\\'; break;
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        default: return std::nullopt;
        }
    }
    return out;
}

std::vector<std::string_view> fields(std::string_view line)
{
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
        std::size_t tab = line.find('\t', start);
        out.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
        if (tab == std::string_view::npos)
            return out;
        start = tab + 1;
    }
}

template <class Int>
bool number(std::string_view s, Int& out)
{
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// Calls `record(fields, line_number)` for each line after the version line; stops at its first error.
template <class F>
Status each_record(std::string_view text, std::string_view version, std::string_view what, F&& record)
{
    std::size_t line_no = 0;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t nl = text.find('\n', start);
        std::string_view line = text.substr(start, nl == std::string_view::npos ? nl : nl - start);
        start = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;
        if (line_no == 1) {
            if (line != version)
                return error(fmt::format("{} line 1: \"{}\" is not \"{}\"", what, line, version));
            continue;
        }
        if (line.empty())
            continue;
        if (auto why = record(fields(line)); !why.empty())
            return error(fmt::format("{} line {}: {}", what, line_no, why));
    }
    if (line_no == 0)
        return error(fmt::format("{} is empty", what));
    return {};
}

}  // namespace

std::string encode(const SandboxPlan& plan)
{
    std::string out(kPlanVersion);
    out += '\n';
    auto line = [&](std::string_view tag, std::string_view value) { out += fmt::format("{}\t{}\n", tag, escape(value)); };
    line("root", plan.root);
    out += fmt::format("overlay\t{}\n", plan.overlay ? 1 : 0);
    if (plan.user_namespace)
        out += "userns\t1\n";
    if (!plan.upper.empty())
        line("upper", plan.upper);
    if (!plan.work.empty())
        line("work", plan.work);
    if (plan.read_mask)
        line("read-mask", plan.mask);
    if (!plan.mirror.empty())
        line("mirror", plan.mirror);
    for (const std::string& h : plan.hidden)
        line("hide", h);
    for (const std::string& b : plan.binds)
        line("bind", b);
    for (const auto& g : plan.grants)
        out += fmt::format("grant\t{}\t{}\n", g.access == SandboxPlan::Grant::Access::read ? "r" : "rw", escape(g.path));
    for (const std::string& d : plan.make_dirs)
        line("mkdir", d);
    for (const std::string& c : plan.cover)
        line("cover", c);
    for (const std::string& r : plan.read_only)
        line("read-only", r);
    if (!plan.tmpdir.empty())
        line("tmpdir", plan.tmpdir);
    if (plan.network != SandboxPlan::Network::open)
        line("network", plan.network == SandboxPlan::Network::none ? "none" : "proxy");
    if (!plan.proxy.empty())
        line("proxy", plan.proxy);
    if (!plan.proxy_token.empty())
        line("proxy-token", plan.proxy_token);
    if (!plan.result.empty())
        line("result", plan.result);
    out += fmt::format("watch\t{}\n", plan.watch_pid);
    return out;
}

Result<SandboxPlan> decode_plan(std::string_view text)
{
    SandboxPlan plan;
    bool has_root = false;
    auto st = each_record(text, kPlanVersion, "sandbox plan", [&](const std::vector<std::string_view>& f) -> std::string {
        const std::string_view tag = f[0];
        auto path = [&](std::size_t i) { return i < f.size() ? unescape(f[i]) : std::nullopt; };
        if (tag == "grant") {
            if (f.size() != 3 || (f[1] != "r" && f[1] != "rw"))
                return "a grant is \"grant\\t(r|rw)\\tPATH\"";
            auto p = path(2);
            if (!p)
                return "a bad escape in the path";
            plan.grants.push_back({std::move(*p), f[1] == "r" ? SandboxPlan::Grant::Access::read
                                                              : SandboxPlan::Grant::Access::read_write});
            return {};
        }
        if (f.size() != 2)
            return fmt::format("\"{}\" takes one field", tag);
        if (tag == "overlay") {
            if (f[1] != "0" && f[1] != "1")
                return "overlay is 0 or 1";
            plan.overlay = f[1] == "1";
            return {};
        }
        if (tag == "userns") {
            if (f[1] != "0" && f[1] != "1")
                return "userns is 0 or 1";
            plan.user_namespace = f[1] == "1";
            return {};
        }
        if (tag == "watch")
            return number(f[1], plan.watch_pid) ? std::string() : "watch is a pid";
        if (tag == "network") {
            if (f[1] != "none" && f[1] != "proxy")
                return "network is none or proxy";
            plan.network = f[1] == "none" ? SandboxPlan::Network::none : SandboxPlan::Network::proxy;
            return {};
        }
        auto p = path(1);
        if (!p)
            return "a bad escape in the path";
        if (tag == "root")
            plan.root = std::move(*p), has_root = true;
        else if (tag == "upper")
            plan.upper = std::move(*p);
        else if (tag == "work")
            plan.work = std::move(*p);
        else if (tag == "read-mask")
            plan.read_mask = true, plan.mask = std::move(*p);
        else if (tag == "mirror")
            plan.mirror = std::move(*p);
        else if (tag == "hide")
            plan.hidden.push_back(std::move(*p));
        else if (tag == "bind")
            plan.binds.push_back(std::move(*p));
        else if (tag == "mkdir")
            plan.make_dirs.push_back(std::move(*p));
        else if (tag == "cover")
            plan.cover.push_back(std::move(*p));
        else if (tag == "read-only")
            plan.read_only.push_back(std::move(*p));
        else if (tag == "tmpdir")
            plan.tmpdir = std::move(*p);
        else if (tag == "result")
            plan.result = std::move(*p);
        else if (tag == "proxy")
            plan.proxy = std::move(*p);
        else if (tag == "proxy-token")
            plan.proxy_token = std::move(*p);
        else
            return fmt::format("unknown record \"{}\"", tag);
        return {};
    });
    if (!st)
        return st.error();
    if (!has_root || plan.root.empty() || plan.root[0] != '/')
        return error("sandbox plan: no absolute root");
    if (plan.overlay && (plan.upper.empty() || plan.work.empty()))
        return error("sandbox plan: an overlay needs upper and work");
    for (const std::string& c : plan.cover)
        if (c.empty() || c[0] != '/')
            return error(fmt::format("sandbox plan: the directory to cover \"{}\" is not absolute", c));
    if (plan.network == SandboxPlan::Network::proxy && (plan.proxy.empty() || plan.proxy_token.empty()))
        return error("sandbox plan: a network through the proxy needs the proxy's socket and a token");
    if (plan.read_mask && (!plan.overlay || plan.mask.empty()))
        return error("sandbox plan: a read mask needs an overlay and a directory to build it in");
    return plan;
}

std::string encode(const SandboxResult& r)
{
    std::string out(kResultVersion);
    out += '\n';
    if (r.setup)
        out += fmt::format("setup\t{}\t{}\t{}\n", escape(r.setup->stage), r.setup->error, escape(r.setup->message));
    out += fmt::format("landlock-abi\t{}\n", r.landlock_abi);
    out += fmt::format("rules\t{}\t{}\n", r.rules_added, r.grants_missing);
    if (r.exit_code)
        out += fmt::format("exited\t{}\n", *r.exit_code);
    if (r.signal)
        out += fmt::format("signaled\t{}\n", *r.signal);
    return out;
}

Result<SandboxResult> decode_result(std::string_view text)
{
    SandboxResult r;
    auto st = each_record(text, kResultVersion, "sandbox result", [&](const std::vector<std::string_view>& f) -> std::string {
        const std::string_view tag = f[0];
        if (tag == "setup") {
            SandboxResult::SetupFailure s;
            auto stage = f.size() == 4 ? unescape(f[1]) : std::nullopt;
            auto message = f.size() == 4 ? unescape(f[3]) : std::nullopt;
            if (!stage || !message || !number(f[2], s.error))
                return "setup is \"setup\\tSTAGE\\tERRNO\\tMESSAGE\"";
            s.stage = std::move(*stage);
            s.message = std::move(*message);
            r.setup = std::move(s);
            return {};
        }
        if (tag == "rules")
            return f.size() == 3 && number(f[1], r.rules_added) && number(f[2], r.grants_missing)
                       ? std::string()
                       : "rules is \"rules\\tADDED\\tMISSING\"";
        int n = 0;
        if (f.size() != 2 || !number(f[1], n))
            return fmt::format("\"{}\" takes one number", tag);
        if (tag == "landlock-abi")
            r.landlock_abi = n;
        else if (tag == "exited")
            r.exit_code = n;
        else if (tag == "signaled")
            r.signal = n;
        else
            return fmt::format("unknown record \"{}\"", tag);
        return {};
    });
    if (!st)
        return st.error();
    return r;
}

}  // namespace qk::enforce
