// Whether this process holds a capability: what decides, as root, whether qk may mount on the host and
// hide its own directories behind an owner the commands' namespaces do not map.
#pragma once

namespace qk {

// Whether `cap` (CAP_SYS_ADMIN, ...) is in this process's effective set.
bool has_capability(int cap);

}  // namespace qk
