// The probe's report and running the probe (qk-sandbox-exec --probe) from qk.
#include "qk/enforce/probe.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "qk/util/subprocess.hpp"

namespace qk::enforce {

bool ProbeReport::read_mask() const
{
    return overlay() && std::any_of(steps.begin(), steps.end(), [](const ProbeStep& s) { return s.stage == "read-mask" && s.ok; });
}

bool ProbeReport::mirror() const
{
    return read_mask() && std::any_of(steps.begin(), steps.end(), [](const ProbeStep& s) { return s.stage == "mirror" && s.ok; });
}

bool ProbeReport::network_namespace() const
{
    return std::any_of(steps.begin(), steps.end(), [](const ProbeStep& s) { return s.stage == "netns" && s.ok; });
}

bool ProbeReport::overlay() const
{
    // Every overlay step tried and passed; the Landlock step does not decide it, nor those of the mask.
    bool any = false;
    for (const ProbeStep& s : steps) {
        if (s.stage == "landlock" || s.stage == "read-mask" || s.stage == "mirror" || s.stage == "netns")
            continue;
        if (!s.ok)
            return false;
        any = any || s.stage == "overlay-workspace";
    }
    return any;
}

std::optional<ProbeStep> ProbeReport::first_failure() const
{
    for (const ProbeStep& s : steps)
        if (!s.ok && s.stage != "mirror" && s.stage != "netns")  // they cost time or the network, not the overlay: said apart
            return s;
    return std::nullopt;
}

std::string encode(const ProbeReport& report)
{
    std::string out = fmt::format("landlock-abi {}\n", report.landlock_abi);
    for (const ProbeStep& s : report.steps) {
        if (s.ok) {
            out += fmt::format("{} ok\n", s.stage);
            continue;
        }
        std::string message = s.message;
        std::replace(message.begin(), message.end(), '\n', ' ');
        out += fmt::format("{} failed {} {}\n", s.stage, s.error, message);
    }
    return out;
}

Result<ProbeReport> decode_probe(std::string_view text)
{
    ProbeReport report;
    std::size_t line_no = 0;
    bool has_abi = false;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t nl = text.find('\n', start);
        std::string_view line = text.substr(start, nl == std::string_view::npos ? nl : nl - start);
        start = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;
        auto bad = [&](std::string_view why) { return error(fmt::format("probe report line {}: {}", line_no, why)); };
        std::size_t sp = line.find(' ');
        if (sp == std::string_view::npos)
            return bad("no verdict");
        std::string_view stage = line.substr(0, sp), rest = line.substr(sp + 1);
        if (stage == "landlock-abi") {
            auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), report.landlock_abi);
            if (ec != std::errc() || end != rest.data() + rest.size())
                return bad("landlock-abi takes a number");
            has_abi = true;
            continue;
        }
        ProbeStep step;
        step.stage = std::string(stage);
        if (rest == "ok") {
            step.ok = true;
        } else if (rest.starts_with("failed ")) {
            rest.remove_prefix(7);
            std::size_t sp2 = rest.find(' ');
            std::string_view err = rest.substr(0, sp2);
            auto [end, ec] = std::from_chars(err.data(), err.data() + err.size(), step.error);
            if (ec != std::errc() || end != err.data() + err.size())
                return bad("a failed step gives its errno");
            step.message = sp2 == std::string_view::npos ? std::string() : std::string(rest.substr(sp2 + 1));
        } else {
            return bad("a step is \"ok\" or \"failed ERRNO MESSAGE\"");
        }
        report.steps.push_back(std::move(step));
    }
    if (!has_abi)
        return error("probe report: no landlock-abi line");
    return report;
}

Result<ProbeReport> probe(const std::string& helper, const std::string& workspace_root, const std::string& scratch_dir)
{
    // Its stderr stays the user's: a helper that cannot start its probe says why there.
    QK_TRY(run, run_captured({helper, "--probe", workspace_root, scratch_dir},
                             {.stderr_to = CaptureOptions::Stderr::inherited}));
    if (!run->succeeded())
        return error(fmt::format("{} --probe failed (status {})", helper, run->wait_status));
    return decode_probe(run->out);
}

}  // namespace qk::enforce
