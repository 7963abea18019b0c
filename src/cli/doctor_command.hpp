// qk doctor: prints what the sandbox can use here; the exit status says whether the mode asked for works.
#pragma once

#include <string>

namespace qk::cli {

struct DoctorOptions {
    std::string directory = ".";
    std::string mode = "audit";  // --sandbox=MODE: the mode whose failure makes the exit status non-zero
};

int run_doctor(const DoctorOptions& options);

}  // namespace qk::cli
