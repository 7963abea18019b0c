#include "qk/sandbox/sandbox_exec_path.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace qk::sandbox {

namespace fs = std::filesystem;

Result<std::string> sandbox_exec_path(const SandboxSettings& settings)
{
    if (!settings.exec.empty()) {
        if (::access(settings.exec.c_str(), X_OK) != 0)
            return sys_error(fmt::format("QK_SANDBOX_EXEC={} cannot be run", settings.exec));
        return settings.exec;
    }
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return error("cannot find where qk is installed (/proc/self/exe): " + ec.message());
    fs::path helper = self.parent_path() / "qk-sandbox-exec";
    if (::access(helper.c_str(), X_OK) != 0)
        return error(fmt::format("--sandbox=enforce needs qk-sandbox-exec beside qk, and {} is missing: install qk "
                                 "again (it installs both)",
                                 helper.string()));
    return helper.string();
}

}  // namespace qk::sandbox
