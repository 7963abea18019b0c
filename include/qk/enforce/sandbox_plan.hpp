// What qk hands qk-sandbox-exec for one command under --sandbox=enforce (the plan), and what the helper
// hands back (the result): one codec for both sides, so neither parses the other's guess of a format.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

struct SandboxPlan {
    // A path the command may use, workspace-relative ("" is the root itself). qk walked it without
    // links (Rules::grants); the helper opens it again on the merged tree, refusing links on the way.
    struct Grant {
        enum class Access { read, read_write };
        std::string path;
        Access access = Access::read;
        friend bool operator==(const Grant&, const Grant&) = default;
    };

    std::string root;    // the workspace root: absolute, canonical
    bool overlay = true;  // false: Landlock alone (writes outside read_write grants refused as they happen)
    // Landlock alone as root: the command runs in a user namespace mapping every id but kStandInOwner, so
    // the file capabilities it keeps reach no run's sandbox directory. Set where the probe made one.
    bool user_namespace = false;
    std::string upper, work;         // overlay mode: the upper and work directories (outside the workspace)
    std::vector<std::string> binds;  // overlay mode: workspace-relative paths bound through from the real
                                     // workspace (.qk, scratch directories, and what a task may
                                     // write in .git and node_modules: rules::Rules::pass_through)
    std::vector<Grant> grants;       // everything else in the workspace is refused
    // Overlay mode: a read mask (enforce/read_mask.hpp), a lower layer over the workspace that stands an
    // unreadable stand-in in front of all but the grants and binds, and keeps `hidden` out of view. The helper builds it on a tmpfs it mounts on `mask`
    // (an empty directory) in its own mount namespace, so nothing is left to remove and no other command
    // sees it. Landlock then allows the merged workspace whole for reading, so that what the command
    // creates is its own to read back.
    bool read_mask = false;
    std::string mask;
    // With a read mask under root: the run's mirror of the workspace (read_mask.hpp, build_mirror), a path
    // to the tmpfs qk holds (/proc/<qk>/fd/<n>); the overlay is then mounted by the host's root with it as
    // a layer above the workspace, and refused directories point there. Empty: each command mirrors them itself.
    std::string mirror;
    std::vector<std::string> hidden;  // workspace-relative: paths other tasks may write meanwhile
    // Overlay mode: directories made on the merged tree (in the upper layer) before the grants are
    // opened, parents first: the outputs named without an extension and the directories outputs lie
    // in, when missing, so that Landlock can allow them. Their grants are among `grants`.
    std::vector<std::string> make_dirs;
    // Kept from the command whatever its grants (qk's own machinery, issue 25). `cover`: absolute
    // directories holding sandboxes' upper, work and mask directories (this run's base, and the bases
    // other runs would use): over an overlay an empty read-only tmpfs is mounted on each once the
    // overlay is up; under Landlock alone they get no right. `read_only`: workspace-relative paths
    // inside what is bound through or granted read-write (qk's cache): a read-only bind over an
    // overlay, read rights only under Landlock alone.
    std::vector<std::string> cover;
    std::vector<std::string> read_only;
    std::string tmpdir;   // when set: the command's TMPDIR (a directory outside the workspace, read and
                          // write), for workspaces under the system's temporary directory, whose new
                          // entries Landlock could not allow without allowing the workspace
    // The network the command reaches (a target's "qk:sandbox" network): open as the host's; none, a
    // network namespace of its own with loopback only; proxy, the same with a listening socket on its
    // loopback handed to the run's filtering proxy (net_proxy) at `proxy` (a unix socket in the run's
    // directory) under `proxy_token`, the one name the proxy knows this task's list by.
    enum class Network { open, none, proxy };
    Network network = Network::open;
    std::string proxy, proxy_token;
    std::string result;   // the file the helper writes its SandboxResult to
    int watch_pid = 0;    // qk's pid: when it dies, everything the command started is killed

    friend bool operator==(const SandboxPlan&, const SandboxPlan&) = default;
};

// One record a line, fields separated by tabs; tab, newline and backslash in a path escaped (\t \n \\).
std::string encode(const SandboxPlan& plan);
// An Error naming the line when the text is not a plan this version writes.
Result<SandboxPlan> decode_plan(std::string_view text);

struct SandboxResult {
    // Set when the sandbox could not be built: which step ("unshare", "uid_map", "mount-private",
    // "overlay", "bind", "landlock-ruleset", "landlock-rule", "landlock-restrict", "exec"...), the errno
    // and a sentence for the user. The command did not run.
    struct SetupFailure {
        std::string stage;
        int error = 0;
        std::string message;
        friend bool operator==(const SetupFailure&, const SetupFailure&) = default;
    };
    std::optional<SetupFailure> setup;
    int landlock_abi = 0;
    std::size_t rules_added = 0;    // Landlock rules the helper added
    std::size_t grants_missing = 0;  // grants that were gone (or behind a link) when the helper opened them
    // How the command ended, when it ran: exit code, or the signal that killed it.
    std::optional<int> exit_code, signal;

    friend bool operator==(const SandboxResult&, const SandboxResult&) = default;
};

std::string encode(const SandboxResult& result);
Result<SandboxResult> decode_result(std::string_view text);

// The exit status qk-sandbox-exec uses when the sandbox could not be built (the result file says why).
inline constexpr int kSetupFailedStatus = 125;

}  // namespace qk::enforce
