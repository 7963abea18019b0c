#include "qk/util/process_secrets.hpp"

#include <sys/prctl.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

extern char** environ;

namespace qk {

unsigned forget_environment_variable(const char* name)
{
    const std::string_view n(name);
    std::vector<char*> entries;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        if (entry.size() > n.size() && entry[n.size()] == '=' && entry.starts_with(n))
            entries.push_back(*e);
    }
    // Unset first: unsetenv finds the entries by their names, which are overwritten after.
    ::unsetenv(name);
    for (char* entry : entries) {
        // Volatile stores: the compiler may not drop writes to memory it believes nothing reads again.
        volatile char* bytes = entry;
        for (std::size_t i = 0, size = std::strlen(entry); i < size; ++i)
            bytes[i] = '\0';
    }
    return static_cast<unsigned>(entries.size());
}

Status make_undumpable()
{
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return sys_error("cannot make qk undumpable (prctl PR_SET_DUMPABLE)");
    return {};
}

}  // namespace qk
