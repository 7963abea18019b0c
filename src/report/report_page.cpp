// The report page: the page's template (src/report/page/report.html, embedded at build time) with the
// report put in its data element, which the page's script reads and renders.
#include "qk/report/report_page.hpp"

#include <string_view>

#include "qk/report/sandbox_report.hpp"

namespace qk::report {

extern const char kReportPage[];

std::string report_page(const audit::RunAudit& report)
{
    constexpr std::string_view kSlot = "/*QK_REPORT_DATA*/";
    const std::string_view page = kReportPage;
    const std::string json = sandbox_report_json(report, 0);
    std::string out;
    out.reserve(page.size() + json.size() + json.size() / 16);
    const std::size_t slot = page.find(kSlot);
    out.append(page.substr(0, slot));
    // '<' only ever appears inside JSON strings, where \u003c means the same: the data can then never
    // close its <script> element, whatever a path holds ("</script>" is a legal file name).
    for (char c : json)
        if (c == '<')
            out += "\\u003c";
        else
            out += c;
    out.append(page.substr(slot + kSlot.size()));
    return out;
}

}  // namespace qk::report
