// qk's version (CMakeLists.txt's project version): what --version prints and what each cache entry
// records it was made by.
#pragma once

namespace qk {

const char* version();

}  // namespace qk
