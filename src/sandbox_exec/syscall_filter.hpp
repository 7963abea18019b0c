// The system calls a command under enforce is refused outright, by a seccomp filter installed last.
#pragma once

#include "setup_error.hpp"

namespace qk::sandbox_exec {

// io_uring_setup, io_uring_enter and io_uring_register fail with ENOSYS, as on a kernel without io_uring
// (and as Docker's default profile has them): tools fall back to plain system calls (libuv does), which
// the recorder sees, so a refusal is always named by its path; and a hostile task loses a large,
// often-exploited kernel interface. Needs no_new_privs (Landlock set it).
Step refuse_io_uring();

}  // namespace qk::sandbox_exec
