#include "probe_steps.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "qk/enforce/landlock_abi.hpp"
#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/unique_fd.hpp"
#include "landlock.hpp"
#include "namespaces.hpp"
#include "network.hpp"
#include "privileges.hpp"

namespace qk::sandbox_exec {

namespace {

// A mount point strictly below `root` (from /proc/self/mountinfo), which an overlay of the workspace
// would not show: "" when there is none.
std::string mount_below(const std::string& root)
{
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string id, parent, dev, source_root, point;
        fields >> id >> parent >> dev >> source_root >> point;
        // Octal escapes (\040 for a space) are left as they are: a match needs the plain prefix anyway.
        if (is_under(point, root))
            return point;
    }
    return {};
}

// A read mask over a lower holding `shown`, `refused` and `dir/inside`, readable: `shown` only, and `gen`
// to stay out of view should it appear. The merged tree must show `shown` as it is, `refused` and
// `dir/inside` as stand-ins (there, mode 000, the real size, none of the real content), and not `gen`,
// made in the lower after the mask was built.
Step try_read_mask(const std::string& base)
{
    const std::string lower = base + "/lower", mask = base + "/mask", upper = base + "/upper", work = base + "/work",
                      merged = base + "/merged";
    for (const std::string& d : {base, lower, lower + "/dir", mask, upper, work, merged})
        if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
            return setup_error("read-mask", "cannot make " + d);
    auto make = [&](const char* name, std::string_view content) {
        UniqueFd fd(::open((lower + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        return fd.valid() && write_all(fd.get(), content);
    };
    for (const char* f : {"shown", "refused", "dir/inside"})
        if (!make(f, "probe"))
            return setup_error("read-mask", fmt::format("cannot make {}/{}", lower, f));
    // Built as a command's is, on a tmpfs of this namespace (owned here by the prober, who may read it).
    if (auto e = build_mask_on_tmpfs(mask, lower, {"shown"}, {"gen"}, std::nullopt))
        return e;
    if (!make("gen", "probe"))
        return setup_error("read-mask", fmt::format("cannot make {}/gen", lower));
    OverlayLayers layers{lower, upper, work, merged, mask};
    if (auto e = mount_overlay_layers(layers)) {
        e->stage = "read-mask";
        return e;
    }
    auto stand_in = [&](const char* name) {
        struct stat st {};
        if (::stat((merged + "/" + name).c_str(), &st) != 0 || (st.st_mode & 07777) != 0 || st.st_size != 5)
            return false;
        UniqueFd fd(::open((merged + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd.valid())
            return errno == EACCES;
        char buf[8] {};
        return ::read(fd.get(), buf, sizeof buf) == 5 && std::string_view(buf, 5) != "probe";
    };
    struct stat st {};
    const bool right = ::stat((merged + "/shown").c_str(), &st) == 0 && (st.st_mode & 0777) == 0600 &&
                       stand_in("refused") && stand_in("dir/inside") && ::stat((merged + "/gen").c_str(), &st) != 0 &&
                       errno == ENOENT;
    // A mount left behind goes with this child's mount namespace.
    (void)::umount2(merged.c_str(), MNT_DETACH);
    (void)::umount2(mask.c_str(), MNT_DETACH);
    if (!right)
        return setup_error("read-mask", "an overlay's lower layer did not stand in front of the workspace's files");
    return std::nullopt;
}

Step try_overlay(const std::string& lower, const std::string& base, const std::string& check)
{
    if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST)
        return setup_error("overlay", "cannot make " + base);
    for (const char* d : {"upper", "work", "merged"})
        if (::mkdir((base + "/" + d).c_str(), 0700) != 0 && errno != EEXIST)
            return setup_error("overlay", "cannot make " + base + "/" + d);
    const std::string upper = base + "/upper", work = base + "/work", merged = base + "/merged";
    // The very mount a command gets, so that what passes here passes there.
    if (auto e = mount_overlay_layers({lower, upper, work, merged}))
        return e;
    if (!check.empty()) {
        std::string probe_file = merged + "/" + check;
        UniqueFd f(::open(probe_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        struct stat st {};
        if (!f.valid() || ::stat((upper + "/" + check).c_str(), &st) != 0)
            return setup_error("overlay", "a write through the overlay did not land in its upper layer");
    }
    (void)::umount2(merged.c_str(), MNT_DETACH);  // one left behind goes with this child's mount namespace
    return std::nullopt;
}

// As the host's root in a mount namespace of its own, what a command over the run's mirror gets: a mask
// whose refused directory `dir` redirects into a mirror holding `dir/refused` as a stand-in; the merged
// tree must show the stand-in (mode 000, none of the lower's content) and not the mirror's own directory.
Step try_mirror(const std::string& base)
{
    const std::string lower = base + "/lower", mask = base + "/mask", mirror = base + "/mirror", upper = base + "/upper",
                      work = base + "/work", merged = base + "/merged";
    for (const std::string& d : {base, lower, lower + "/dir", mask, mirror, upper, work, merged})
        if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
            return setup_error("mirror", "cannot make " + d);
    UniqueFd secret(::open((lower + "/dir/refused").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!secret.valid() || !write_all(secret.get(), "probe"))
        return setup_error("mirror", "cannot make " + lower + "/dir/refused");
    UniqueFd mirror_fd(::open(mirror.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto mirrored = enforce::build_mirror(lower, mirror_fd.get(), {enforce::kStandInOwner, enforce::kStandInOwner});
    if (!mirrored)
        return SetupError{"mirror", mirrored.error().sys_errno, mirrored.error().message};
    if (::mount("qk-mask", mask.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0)
        return setup_error("mirror", "cannot mount a tmpfs for the mask");
    auto masked = enforce::build_read_mask(lower, mask, {}, {}, enforce::StandInOwner{enforce::kStandInOwner,
                                                                                       enforce::kStandInOwner}, mirror);
    if (!masked)
        return SetupError{"mirror", masked.error().sys_errno, masked.error().message};
    if (auto e = mount_overlay_layers({lower, upper, work, merged, mask, mirror, true})) {
        e->stage = "mirror";
        return e;
    }
    struct stat st {};
    char buf[8] {};
    UniqueFd f(::open((merged + "/dir/refused").c_str(), O_RDONLY | O_CLOEXEC));
    const bool right = ::stat((merged + "/dir/refused").c_str(), &st) == 0 && (st.st_mode & 07777) == 0 &&
                       st.st_uid == enforce::kStandInOwner && (!f.valid() || ::read(f.get(), buf, sizeof buf) != 5 ||
                                                               std::string_view(buf, 5) != "probe") &&
                       ::stat((merged + "/" + enforce::kMirrorName).c_str(), &st) != 0;
    (void)::umount2(merged.c_str(), MNT_DETACH);  // and the rest go with this child's mount namespace
    if (!right)
        return setup_error("mirror", "an overlay did not follow the read mask's redirect into the run's mirror");
    return std::nullopt;
}

// In a child, as root allowed to mount on the host: the mirror step, printed.
[[noreturn]] void mirror_step(const std::string& scratch, int out)
{
    Step failed = enter_mount_namespace();
    if (!failed)
        failed = try_mirror(scratch + "/probe-mirror");
    enforce::ProbeReport r;
    r.steps.push_back(failed ? enforce::ProbeStep{"mirror", false, failed->error, failed->message}
                             : enforce::ProbeStep{"mirror", true, 0, {}});
    std::string text = enforce::encode(r);
    (void)write_all(out, text.substr(text.find('\n') + 1));
    ::_exit(0);
}

// In a child: the namespace steps, each printed as it passes; the first failure ends them.
[[noreturn]] void namespace_steps(const std::string& root, const std::string& scratch, int out)
{
    auto say = [&](const std::string& stage, const Step& failed, bool ends = true) {
        enforce::ProbeReport r;
        r.steps.push_back(failed ? enforce::ProbeStep{stage, false, failed->error, failed->message}
                                 : enforce::ProbeStep{stage, true, 0, {}});
        std::string text = enforce::encode(r);
        (void)write_all(out, text.substr(text.find('\n') + 1));  // the step's line, not the ABI's
        if (failed && ends)
            ::_exit(0);
    };
    Step ns = enter_namespaces(false);
    say("userns", ns && ns->stage == "unshare" ? ns : std::nullopt);
    say("uid_map", ns && ns->stage == "uid_map" ? ns : std::nullopt);
    say("mount-private", ns);
    // The network namespace a command declaring its network gets; its failure ends nothing else.
    say("netns", try_network_namespace(), false);
    std::string lower = scratch + "/probe-lower";
    if (::mkdir(lower.c_str(), 0700) != 0 && errno != EEXIST)
        say("overlay", setup_error("overlay", "cannot make " + lower));
    say("overlay", try_overlay(lower, scratch + "/probe-scratch", "probe-write"));
    if (std::string below = mount_below(root); !below.empty())
        say("overlay-workspace", SetupError{"overlay-workspace", 0,
                                            below + " is a mount point inside the workspace: an overlay of the "
                                                    "workspace would not show it"});
    say("overlay-workspace", try_overlay(root, scratch + "/probe-workspace", {}));
    say("read-mask", try_read_mask(scratch + "/probe-mask"));
    ::_exit(0);
}

}  // namespace

enforce::ProbeReport probe(const std::string& workspace_root, const std::string& scratch_dir)
{
    enforce::ProbeReport report;
    int why = 0;
    report.landlock_abi = enforce::landlock_abi(&why);
    report.steps.push_back(report.landlock_abi > 0
                               ? enforce::ProbeStep{"landlock", true, 0, {}}
                               : enforce::ProbeStep{"landlock", false, why,
                                                    why == EOPNOTSUPP ? "Landlock is built in but not enabled: add "
                                                                        "landlock to the kernel's lsm= boot parameter"
                                                                      : "this kernel has no Landlock (Linux 5.13 or later)"});
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return report;
    UniqueFd in(fds[0]), out(fds[1]);
    pid_t child = ::fork();
    if (child == 0) {
        in.reset();
        namespace_steps(workspace_root, scratch_dir, out.get());
    }
    out.reset();
    std::string text;
    (void)read_all(in.get(), text);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (::geteuid() == 0 && has_capability(CAP_SYS_ADMIN) && ::pipe2(fds, O_CLOEXEC) == 0) {
        UniqueFd min(fds[0]), mout(fds[1]);
        pid_t m = ::fork();
        if (m == 0) {
            min.reset();
            mirror_step(scratch_dir, mout.get());
        }
        mout.reset();
        (void)read_all(min.get(), text);
        ::waitpid(m, &status, 0);
    }
    if (auto steps = enforce::decode_probe("landlock-abi 0\n" + text))
        for (auto& s : steps->steps)
            report.steps.push_back(std::move(s));
    // What the steps made: the mounts went with the children's namespaces; the directories stay in
    // scratch_dir, which the caller removes (qk hands it to the thread that frees command directories).
    // Removing them here kept every run waiting about 80 ms on ext4 mounted with discard, more than the
    // probe itself (docs/benchmarks.md, "Enforce at audit's cost").
    return report;
}

}  // namespace qk::sandbox_exec
