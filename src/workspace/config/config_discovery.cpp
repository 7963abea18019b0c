// Which directories are projects, as Nx's package-json and project-json plugins find them
// (nx/src/plugins/package-json/create-nodes.ts getGlobPatternsFromPackageManagerWorkspaces,
// buildPackageJsonWorkspacesMatcher): every project.json outside node_modules, and every package.json
// the workspace globs select, each glob `<pattern>/package.json` with a leading "./" dropped; a
// package.json is selected when some positive glob matches it and no "!" glob does (only negatives:
// `**/package.json` is added). The root package.json is a project when it has an "nx" field.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_validate.hpp"
#include "qk/workspace/glob.hpp"
#include "pnpm/pnpm_yaml.hpp"
#include "qk/util/io.hpp"
#include "qk/util/special_names.hpp"

namespace qk::workspace::detail {

namespace fs = std::filesystem;

namespace {

// pnpm-workspace.yaml `packages`, or an error naming the line and column.
Result<std::vector<std::string>> read_pnpm_workspace(const fs::path& root, bool* found)
{
    std::error_code ec;
    fs::path p = root / "pnpm-workspace.yaml";
    *found = fs::is_regular_file(p, ec);
    if (!*found)
        return std::vector<std::string>{};
    auto text = read_file(p.string());
    if (!text)
        return error("pnpm-workspace.yaml: " + text.error().message);
    QK_TRY(docs, pnpm_yaml::parse(*text, "pnpm-workspace.yaml", "fix it: pnpm reads the same file"));
    std::vector<std::string> globs;
    if (docs->empty())
        return globs;
    const pnpm_yaml::Doc& doc = docs->front();
    const pnpm_yaml::Node& top = doc.root_node();
    auto where = [](const pnpm_yaml::Node& n) { return fmt::format("pnpm-workspace.yaml:{}:{}", n.line, n.column); };
    if (top.is_null())
        return globs;
    if (!top.is_map())
        return error(fmt::format("{}: the top level must be a mapping (packages: [...])", where(top)));
    const pnpm_yaml::Node* packages = nullptr;
    for (std::uint32_t i = 0; i < top.count; i += 2)
        if (const pnpm_yaml::Node& key = doc.child(top, i); key.is_scalar() && key.text == "packages")
            packages = &doc.child(top, i + 1);
    if (!packages || packages->is_null())
        return globs;
    if (!packages->is_seq())
        return error(fmt::format("{}: packages must be a list of globs, such as\n  packages:\n    - \"packages/*\"",
                                 where(*packages)));
    for (std::uint32_t i = 0; i < packages->count; ++i) {
        const pnpm_yaml::Node& item = doc.child(*packages, i);
        if (!item.is_scalar() || item.is_null())
            return error(fmt::format("{}: each entry of packages must be a glob string", where(item)));
        globs.push_back(item.text);
    }
    return globs;
}

// package.json `workspaces`: an array, or {packages: [...]} (yarn's form).
Result<std::vector<std::string>> package_json_workspaces(const Json& pkg)
{
    std::vector<std::string> globs;
    const Json* ws = pkg.find("workspaces");
    if (!ws)
        return globs;
    const Json* list = ws->is_object() ? ws->find("packages") : ws;
    if (!list)
        return globs;
    if (auto s = validate_string_array(*list, "package.json", ws->is_object() ? "workspaces.packages" : "workspaces");
        !s)
        return s.error();
    for (const auto& g : list->as_array())
        globs.push_back(g.as_string());
    return globs;
}

// Nx's normalisation: `<pattern>/package.json` (unless it ends so), without a leading "./".
std::string package_json_glob(std::string pattern)
{
    bool negated = !pattern.empty() && pattern[0] == '!';
    if (negated)
        pattern.erase(0, 1);
    while (pattern.size() > 1 && pattern.back() == '/')
        pattern.pop_back();
    if (!(pattern == "package.json" || (pattern.size() > 13 && pattern.ends_with("/package.json"))))
        pattern += "/package.json";
    if (pattern.rfind("./", 0) == 0)
        pattern.erase(0, 2);
    return (negated ? "!" : "") + pattern;
}

bool skipped_dir(std::string_view name)
{
    return is_special_dir(name) || name == ".nx";  // .nx: Nx's own cache and workspace data
}

// Every package.json and project.json under the root, workspace-relative, sorted. POSIX readdir with
// d_type rather than std::filesystem: the walk visits every file of the workspace (a third of the
// load time of 1,000 projects with std::filesystem). Symbolic links to directories are not followed.
Status walk_dir(int dir_fd, const std::string& rel, std::vector<std::string>& package_jsons,
                std::vector<std::string>& project_jsons)
{
    DIR* dir = fdopendir(dir_fd);
    if (!dir) {
        int err = errno;
        ::close(dir_fd);
        return sys_error(fmt::format("{}: cannot list the directory", rel.empty() ? "." : rel), err);
    }
    std::vector<std::string> subdirs;
    errno = 0;
    while (dirent* e = readdir(dir)) {
        std::string_view name = e->d_name;
        if (name == "." || name == "..")
            continue;
        unsigned char type = e->d_type;
        bool config = name == "package.json" || name == "project.json";
        if (type == DT_UNKNOWN || (type == DT_LNK && config)) {
            struct stat st;
            int flags = type == DT_LNK ? 0 : AT_SYMLINK_NOFOLLOW;
            if (fstatat(dirfd(dir), e->d_name, &st, flags) != 0)
                continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        std::string path = rel.empty() ? std::string(name) : rel + "/" + std::string(name);
        if (type == DT_DIR) {
            if (!skipped_dir(std::string(name)))
                subdirs.push_back(std::move(path));
        } else if (type == DT_REG && config) {
            (name == "package.json" ? package_jsons : project_jsons).push_back(std::move(path));
        }
    }
    int parent = dirfd(dir);
    for (const auto& sub : subdirs) {
        std::string_view base = std::string_view(sub).substr(rel.empty() ? 0 : rel.size() + 1);
        int fd = openat(parent, std::string(base).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno == EACCES || errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
                continue;  // unreadable, or gone since it was listed
            int err = errno;
            closedir(dir);
            return sys_error(fmt::format("{}: cannot open the directory", sub), err);
        }
        if (auto s = walk_dir(fd, sub, package_jsons, project_jsons); !s) {
            closedir(dir);
            return s;
        }
    }
    closedir(dir);
    return {};
}

Status walk(const fs::path& root, std::vector<std::string>& package_jsons, std::vector<std::string>& project_jsons)
{
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sys_error(fmt::format("{}: cannot list the workspace", root.string()));
    QK_TRY_STATUS(walk_dir(fd, "", package_jsons, project_jsons));
    std::sort(package_jsons.begin(), package_jsons.end());
    std::sort(project_jsons.begin(), project_jsons.end());
    return {};
}

std::string dir_of(const std::string& file)
{
    auto slash = file.rfind('/');
    return slash == std::string::npos ? "." : file.substr(0, slash);
}

}  // namespace

Result<Discovery> discover_projects(const fs::path& root, const Json& root_package_json, Workspace::Files& files,
                                    const std::vector<std::string>* listed)
{
    Discovery d;
    bool pnpm_found = false;
    QK_TRY(pnpm_globs, read_pnpm_workspace(root, &pnpm_found));
    if (pnpm_found)
        files.pnpm_workspace_yaml = "pnpm-workspace.yaml";
    QK_TRY(pkg_globs, package_json_workspaces(root_package_json));
    d.package_globs = *pkg_globs;
    d.package_globs.insert(d.package_globs.end(), pnpm_globs->begin(), pnpm_globs->end());

    std::vector<Glob> positives, negatives;
    bool root_is_project = root_package_json.find("nx") != nullptr;
    std::vector<std::string> patterns;
    for (const auto& g : d.package_globs)
        patterns.push_back(package_json_glob(g));
    if (root_is_project)
        patterns.push_back("package.json");
    bool any_negative = false, any_real_positive = false;
    for (const auto& p : patterns) {
        if (p[0] == '!')
            any_negative = true;
        else if (p != "package.json")
            any_real_positive = true;
    }
    if (any_negative && !any_real_positive)
        patterns.push_back("**/package.json");
    for (const auto& p : patterns) {
        bool neg = p[0] == '!';
        auto g = Glob::compile(neg ? std::string_view(p).substr(1) : std::string_view(p));
        if (!g)
            return error(fmt::format("the workspace glob \"{}\" is not a valid glob: {}", p, g.error().message));
        (neg ? negatives : positives).push_back(std::move(*g));
    }

    std::vector<std::string> package_jsons, project_jsons;
    if (listed) {
        for (const std::string& f : *listed) {
            std::string_view name = f;
            if (auto slash = name.rfind('/'); slash != std::string_view::npos)
                name.remove_prefix(slash + 1);
            if (name != "package.json" && name != "project.json")
                continue;
            // The index leaves out .git, .qk and node_modules; .nx is Nx's own data, never a project.
            if (f.starts_with(".nx/") || f.find("/.nx/") != std::string::npos)
                continue;
            (name == "package.json" ? package_jsons : project_jsons).push_back(f);
        }
    } else {
        QK_TRY_STATUS(walk(root, package_jsons, project_jsons));
    }
    std::set<std::string> roots;
    for (const auto& pj : project_jsons)
        roots.insert(dir_of(pj));
    for (const auto& pkg : package_jsons) {
        bool selected = std::any_of(positives.begin(), positives.end(), [&](auto& g) { return g.matches(pkg); }) &&
                        std::none_of(negatives.begin(), negatives.end(), [&](auto& g) { return g.matches(pkg); });
        if (pkg == "package.json" && !root_is_project)
            selected = false;  // the root package.json is a project only with an "nx" field
        if (selected)
            roots.insert(dir_of(pkg));
    }
    d.project_roots.assign(roots.begin(), roots.end());
    return d;
}

}  // namespace qk::workspace::detail
