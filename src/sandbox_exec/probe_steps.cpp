#include "probe_steps.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/unique_fd.hpp"
#include "landlock.hpp"
#include "namespaces.hpp"

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

// In a child: the namespace steps, each printed as it passes; the first failure ends them.
[[noreturn]] void namespace_steps(const std::string& root, const std::string& scratch, int out)
{
    auto say = [&](const std::string& stage, const Step& failed) {
        enforce::ProbeReport r;
        r.steps.push_back(failed ? enforce::ProbeStep{stage, false, failed->error, failed->message}
                                 : enforce::ProbeStep{stage, true, 0, {}});
        std::string text = enforce::encode(r);
        (void)write_all(out, text.substr(text.find('\n') + 1));  // the step's line, not the ABI's
        if (failed)
            ::_exit(0);
    };
    Step ns = enter_namespaces(false);
    say("userns", ns && ns->stage == "unshare" ? ns : std::nullopt);
    say("uid_map", ns && ns->stage == "uid_map" ? ns : std::nullopt);
    say("mount-private", ns);
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
    report.landlock_abi = landlock_abi(&why);
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
    if (auto steps = enforce::decode_probe("landlock-abi 0\n" + text))
        for (auto& s : steps->steps)
            report.steps.push_back(std::move(s));
    // What the steps made: the mounts went with the child's namespace; the directories stay.
    for (const char* d : {"probe-scratch", "probe-workspace"}) {
        for (const char* sub : {"upper/probe-write", "work/work", "upper", "work", "merged"}) {
            std::string p = scratch_dir + "/" + d + "/" + sub;
            if (::unlink(p.c_str()) != 0)
                ::rmdir(p.c_str());
        }
        ::rmdir((scratch_dir + "/" + d).c_str());
    }
    ::rmdir((scratch_dir + "/probe-lower").c_str());
    std::error_code ignored;
    std::filesystem::remove_all(scratch_dir + "/probe-mask", ignored);
    return report;
}

}  // namespace qk::sandbox_exec
