// The report page: the page's template (src/report/page/report.html, embedded at build time) with the
// report and the table of finding kinds put in its data elements, which the page's script reads and
// renders.
#include "qk/report/report_page.hpp"

#include <string_view>

#include "qk/audit/finding_kinds.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/util/json_writer.hpp"

namespace qk::report {

extern const char kReportPage[];

namespace {

// `json` in a <script type="application/json"> element. '<' only ever appears inside JSON strings, where
// \u003c means the same: the data can then never close its element, whatever a path holds
// ("</script>" is a legal file name).
void put_json(std::string& out, std::string_view json)
{
    for (char c : json)
        if (c == '<')
            out += "\\u003c";
        else
            out += c;
}

}  // namespace

std::string finding_kinds_json()
{
    JsonWriter w(0);
    w.begin_array();
    for (const audit::FindingKind& k : audit::finding_kinds())
        w.begin_object()
            .key("name")
            .value(k.name)
            .key("one")
            .value(k.one)
            .key("many")
            .value(k.many)
            .key("words")
            .value(k.words)
            .key("beyond")
            .value(k.beyond)
            .end_object();
    w.end_array();
    return w.str();
}

std::string report_page(const audit::RunAudit& report)
{
    constexpr std::string_view kKindsSlot = "/*QK_FINDING_KINDS*/";
    constexpr std::string_view kSlot = "/*QK_REPORT_DATA*/";
    const std::string_view page = kReportPage;
    const std::string json = sandbox_report_json(report, 0);
    const std::string kinds = finding_kinds_json();
    std::string out;
    out.reserve(page.size() + kinds.size() + json.size() + json.size() / 16);
    const std::size_t kinds_slot = page.find(kKindsSlot);
    const std::size_t slot = page.find(kSlot, kinds_slot);
    out.append(page.substr(0, kinds_slot));
    put_json(out, kinds);
    out.append(page.substr(kinds_slot + kKindsSlot.size(), slot - kinds_slot - kKindsSlot.size()));
    put_json(out, json);
    out.append(page.substr(slot + kSlot.size()));
    return out;
}

}  // namespace qk::report
