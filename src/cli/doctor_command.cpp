#include "doctor_command.hpp"

#include <cstdio>

#include "doctor.hpp"
#include "qk/util/result.hpp"

namespace qk::cli {

int run_doctor(const DoctorOptions& options)
{
    if (options.mode != "audit" && options.mode != "enforce")
        throw FatalError("qk doctor --sandbox=" + options.mode + ": the modes are audit and enforce");
    DoctorReport report = doctor(options.directory, or_fatal(Settings::read()));
    std::string text = doctor_text(report);
    const bool shown = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
    bool works = options.mode == "enforce" ? report.enforce_works : report.audit_works;
    return works && report.workspace_ok && report.remote_ok && shown ? 0 : 1;
}

}  // namespace qk::cli
