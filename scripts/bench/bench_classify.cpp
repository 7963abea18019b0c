// qk-bench-classify: how fast the sandbox audit judges a recording (docs/benchmarks.md, "Classification
// throughput"). Generates a workspace (or takes one with -C), opens it as `qk run-many` does
// (key::Session), plans and keys a `build` task, builds its rules (sandbox::task_rules), then builds one
// record::Recording of --accesses distinct paths in the mix described at kMix below and times
// audit::classify over it, --reps times; prints the median and accesses per second. Also times the
// rules alone (Rules::read / Rules::write once per path, no classifier) to split the cost.
//
//   qk-bench-classify [-C DIR] [--projects 200] [--files 100] [--layers 10] [--accesses 1000000]
//                     [--reps 7] [--task P:build] [--seed 42] [--keep] [--loop N]
//
// Without -C the workspace is generated in a temporary directory (removed at exit unless --keep):
// nx.json (namedInputs default/production, targetDefaults.build: dependsOn ^build, inputs production and
// ^production, outputs {projectRoot}/dist), pnpm-workspace.yaml, a root package.json, .gitignore,
// tsconfig.base.json, .nvmrc, .env, and PROJECTS packages in LAYERS layers, each depending on 1-3 of
// the layer below: package.json, project.json, tsconfig.json, README.md, FILES-6 src/fNN.ts and 2
// src/fNN.spec.ts (FILES files a project: 20,007 in the file index at the defaults). The task timed is, by default, the build of the
// project with the most transitive dependencies. --loop N: classify N times more after the timing
// (for `perf record`).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "qk/audit/classify.hpp"
#include "qk/key/session.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/task_rules.hpp"

using namespace qk;
namespace fs = std::filesystem;

namespace {

struct Options {
    std::string dir;
    int projects = 200, files = 100, layers = 10, reps = 7, loop = 0;
    std::size_t accesses = 1'000'000;
    std::string task;
    unsigned seed = 42;
    bool keep = false;
};

[[noreturn]] void usage(const char* why)
{
    std::fprintf(stderr,
                 "qk-bench-classify: %s\nusage: qk-bench-classify [-C DIR] [--projects N] [--files N] [--layers N] "
                 "[--accesses N] [--reps N] [--task P:build] [--seed N] [--keep] [--loop N]\n",
                 why);
    std::exit(2);
}

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        if (a == "-C")
            o.dir = next();
        else if (a == "--projects")
            o.projects = std::stoi(next());
        else if (a == "--files")
            o.files = std::stoi(next());
        else if (a == "--layers")
            o.layers = std::stoi(next());
        else if (a == "--accesses")
            o.accesses = std::stoull(next());
        else if (a == "--reps")
            o.reps = std::stoi(next());
        else if (a == "--task")
            o.task = next();
        else if (a == "--seed")
            o.seed = static_cast<unsigned>(std::stoul(next()));
        else if (a == "--loop")
            o.loop = std::stoi(next());
        else if (a == "--keep")
            o.keep = true;
        else
            usage(("unknown argument " + a).c_str());
    }
    if (o.projects < 1 || o.layers < 1 || o.layers > o.projects || o.files < 4 || o.files > 100 || o.reps < 1)
        usage("need projects >= layers >= 1, 4 <= files <= 100, reps >= 1");
    return o;
}

void write(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string pname(int i) { return fmt::format("p{:04d}", i); }

// The workspace described at the top of the file.
void generate(const fs::path& root, const Options& o)
{
    std::mt19937 rng(o.seed);
    write(root / "nx.json", R"({
  "namedInputs": {
    "default": ["{projectRoot}/**/*", "sharedGlobals"],
    "production": ["default", "!{projectRoot}/**/*.spec.ts", "!{projectRoot}/README.md"],
    "sharedGlobals": []
  },
  "targetDefaults": {
    "build": { "dependsOn": ["^build"], "inputs": ["production", "^production"], "outputs": ["{projectRoot}/dist"], "cache": true }
  }
}
)");
    write(root / "pnpm-workspace.yaml", "packages: [\"packages/*\"]\n");
    write(root / "package.json", R"({ "name": "bench-workspace", "version": "0.0.0", "private": true })" "\n");
    write(root / ".gitignore", "node_modules\ndist\n.qk\n");
    write(root / "tsconfig.base.json", R"({ "compilerOptions": { "strict": true, "target": "es2022" } })" "\n");
    write(root / ".nvmrc", "20\n");
    write(root / ".env", "API=1\n");
    auto layer_of = [&](int i) { return i * o.layers / o.projects; };
    std::map<int, std::vector<int>> members;
    for (int i = 0; i < o.projects; ++i)
        members[layer_of(i)].push_back(i);
    for (int i = 0; i < o.projects; ++i) {
        std::string name = pname(i);
        fs::path dir = root / "packages" / name;
        std::vector<int> deps;
        if (auto it = members.find(layer_of(i) - 1); it != members.end()) {
            std::vector<int> below = it->second;
            std::shuffle(below.begin(), below.end(), rng);
            deps.assign(below.begin(), below.begin() + std::min<std::size_t>(below.size(), 1 + rng() % 3));
            std::sort(deps.begin(), deps.end());
        }
        std::string dep_json;
        for (int d : deps)
            dep_json += fmt::format("{}\"@bench/{}\": \"workspace:*\"", dep_json.empty() ? "" : ", ", pname(d));
        write(dir / "package.json", fmt::format(R"({{ "name": "@bench/{}", "version": "1.0.0", "private": true{} }})" "\n",
                                                name, dep_json.empty() ? "" : ", \"dependencies\": { " + dep_json + " }"));
        write(dir / "project.json",
              fmt::format(R"({{ "name": "@bench/{0}", "sourceRoot": "packages/{0}/src", "projectType": "library",
  "targets": {{ "build": {{ "executor": "nx:run-commands", "options": {{ "command": "tsc -b", "cwd": "{{projectRoot}}" }} }} }} }}
)",
                          name));
        write(dir / "tsconfig.json", R"({ "extends": "../../tsconfig.base.json", "include": ["src"] })" "\n");
        write(dir / "README.md", "# " + name + "\n");
        for (int f = 0; f < o.files - 4; ++f) {
            bool spec = f >= o.files - 6;
            write(dir / "src" / fmt::format("f{:02d}{}", f, spec ? ".spec.ts" : ".ts"),
                  fmt::format("export const {}_{} = {};\n", name, f, rng() % 1000));
        }
    }
}

// --- the recording ---------------------------------------------------------------------------------

// The mix, per million distinct paths, by what the path is (the classes the rules then give are
// printed). In-workspace files that exist are limited to the workspace's own; the rest are made up, as
// a real recording's node_modules, outside and output paths are.
struct Mix {
    const char* what;
    double share;  // of --accesses; "all" categories use every file there is instead
};
constexpr Mix kMix[] = {
    {"read: every file of the task's project and of the projects it depends on (inputs, specs, README)", -1},
    {"read: files of other projects (readsOutsideInputs)", 0.005},
    {"read: dependencies' outputs (packages/pDEP/dist/...)", 0.10},
    {"write+create: the task's outputs (dist/...)", 0.05},
    {"read+write: outputs read back", 0.005},
    {"create: directories of outputs", 0.002},
    {"write: stray (packages/pX/.cache, root *.tsbuildinfo)", 0.003},
    {"read: node_modules (root .pnpm store and packages' node_modules)", 0.30},
    {"write: node_modules/.cache", 0.01},
    {"read: outside the workspace (/usr/lib, /usr/share, /etc, /proc, ~/.npm)", 0.25},
    {"write: outside the workspace (/tmp)", 0.02},
    {"probe only (ENOENT: module resolution in the workspace and node_modules)", 0.15},
    {"list only (directories opened)", 0.03},
    {"read: .git objects (unkeyedReads)", 0.002},
    {"read: .qk state", 0.001},
    {"read: config: every project's package.json and tsconfig.json, root dotfiles", -1},
};

struct Built {
    record::Recording rec;
    std::vector<std::size_t> count;  // per kMix entry
};

Built build_recording(const key::Session& s, std::size_t task_project, const std::string& root, const Options& o)
{
    Built b;
    b.count.assign(std::size(kMix), 0);
    std::mt19937_64 rng(o.seed);
    const auto& ws = s.workspace();
    const auto& projects = ws.projects();
    std::vector<bool> related(projects.size(), false);
    related[task_project] = true;
    for (std::size_t p : s.graph().transitive_dependencies(task_project))
        related[p] = true;
    std::vector<std::string> mine, others;
    const auto& files = const_cast<key::Session&>(s).files().files();
    for (const std::string& f : files) {
        const workspace::Project* owner = ws.project_owning(f);
        if (!owner)
            continue;
        std::size_t p = static_cast<std::size_t>(owner - projects.data());
        (related[p] ? mine : others).push_back(f);
    }
    std::shuffle(others.begin(), others.end(), rng);
    std::vector<std::size_t> deps;
    for (std::size_t p = 0; p < projects.size(); ++p)
        if (related[p] && p != task_project)
            deps.push_back(p);
    const std::string own = projects[task_project].root;
    auto abs = [&](const std::string& rel) { return root + "/" + rel; };
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    auto dep_root = [&] { return deps.empty() ? own : projects[deps[pick(deps.size())]].root; };
    auto any_root = [&] { return projects[pick(projects.size())].root; };
    static const char* exts[] = {".js", ".d.ts", ".js.map", ".cjs", ".mjs", ".json"};
    static const char* pkgs[] = {"typescript", "react", "lodash", "@babel/core", "esbuild", "vite", "rxjs",
                                 "@types/node", "eslint", "jest", "zod", "tslib", "chalk", "debug", "semver"};
    auto pkg = [&] { return std::string(pkgs[pick(std::size(pkgs))]); };
    std::size_t serial = 0;  // makes every made-up path distinct
    auto add = [&](std::size_t mix, const std::string& path, std::uint16_t access) {
        std::size_t before = b.rec.paths().size();
        b.rec.add(path, access);
        if (b.rec.paths().size() > before)
            ++b.count[mix];
    };
    auto quota = [&](std::size_t mix) { return static_cast<std::size_t>(kMix[mix].share * double(o.accesses)); };

    for (const std::string& f : mine)
        add(0, abs(f), record::kRead);
    for (std::size_t i = 0; i < std::min(quota(1), others.size()); ++i)
        add(1, abs(others[i]), record::kRead);
    for (std::size_t i = 0, n = quota(2); i < n; ++i)
        add(2, abs(fmt::format("{}/dist/m{}/f{}{}", dep_root(), pick(40), serial++, exts[pick(std::size(exts))])),
            record::kRead);
    for (std::size_t i = 0, n = quota(3); i < n; ++i)
        add(3, abs(fmt::format("{}/dist/m{}/f{}{}", own, pick(40), serial++, exts[pick(std::size(exts))])),
            record::kWrite | record::kCreate);
    for (std::size_t i = 0, n = quota(4); i < n; ++i)
        add(4, abs(fmt::format("{}/dist/f{}.js", own, serial++)), record::kRead | record::kWrite);
    for (std::size_t i = 0, n = quota(5); i < n; ++i)
        add(5, abs(fmt::format("{}/dist/m{}", own, serial++)), record::kCreate);
    for (std::size_t i = 0, n = quota(6); i < n; ++i) {
        if (i % 2)
            add(6, abs(fmt::format("{}/.cache/c{}", own, serial++)), record::kWrite | record::kCreate);
        else
            add(6, abs(fmt::format("t{}.tsbuildinfo", serial++)), record::kWrite | record::kCreate);
    }
    for (std::size_t i = 0, n = quota(7); i < n; ++i) {
        std::string p = pkg();
        std::string rel = i % 4 == 0
            ? fmt::format("{}/node_modules/{}/lib/f{}{}", any_root(), p, serial++, exts[pick(std::size(exts))])
            : fmt::format("node_modules/.pnpm/{}@{}.{}.0/node_modules/{}/dist/f{}{}", p, pick(9), pick(20), p, serial++,
                          exts[pick(std::size(exts))]);
        add(7, abs(rel), record::kRead);
        if (i % 50 == 0)  // read through pnpm's link: node_modules/<pkg>/... as spelled
            b.rec.add_alias(abs(fmt::format("node_modules/{}/alias{}.js", p, serial++)), abs(rel));
    }
    for (std::size_t i = 0, n = quota(8); i < n; ++i)
        add(8, abs(fmt::format("node_modules/.cache/{}/c{}", pkg(), serial++)), record::kWrite | record::kCreate);
    static const char* outside[] = {"/usr/lib/x86_64-linux-gnu/lib{}.so.{}", "/usr/share/zoneinfo/z{}/{}",
                                    "/etc/ssl/certs/c{}.{}",                 "/proc/{}/status{}",
                                    "/home/user/.npm/_cacache/index-v5/{}/{}", "/usr/local/lib/node/v{}/{}.js"};
    for (std::size_t i = 0, n = quota(9); i < n; ++i)
        add(9, fmt::format(fmt::runtime(outside[i % std::size(outside)]), serial++, pick(100)), record::kRead);
    for (std::size_t i = 0, n = quota(10); i < n; ++i)
        add(10, fmt::format("/tmp/tsc-{}/out{}.tmp", pick(64), serial++), record::kWrite | record::kCreate);
    for (std::size_t i = 0, n = quota(11); i < n; ++i) {
        std::string rel = i % 3 == 0 ? fmt::format("{}/src/f{}.tsx", dep_root(), serial++)
                          : i % 3 == 1 ? fmt::format("node_modules/{}/f{}/index.js", pkg(), serial++)
                                       : fmt::format("{}/node_modules/@types/t{}/package.json", own, serial++);
        add(11, abs(rel), record::kProbe);
    }
    for (std::size_t i = 0, n = quota(12); i < n; ++i)
        add(12, abs(fmt::format("node_modules/.pnpm/{}@{}/node_modules/d{}", pkg(), pick(9), serial++)), record::kList);
    for (std::size_t i = 0, n = quota(13); i < n; ++i)
        add(13, abs(fmt::format(".git/objects/{:02x}/{:038x}", pick(256), serial++)), record::kRead);
    for (std::size_t i = 0, n = quota(14); i < n; ++i)
        add(14, abs(fmt::format(".qk/cache/{:032x}/meta.json", serial++)), record::kRead);
    for (const auto& p : projects) {
        if (!p.package_json.empty())
            add(15, abs(p.package_json), record::kRead);
        add(15, abs(p.root + "/tsconfig.json"), record::kRead);
    }
    for (const char* f : {"nx.json", "package.json", "pnpm-workspace.yaml", "tsconfig.base.json", ".nvmrc", ".npmrc",
                          ".env", ".gitignore", ".git/HEAD", ".git/config"})
        add(15, abs(f), record::kRead);
    // Fill up to --accesses with node_modules reads.
    while (b.rec.paths().size() < o.accesses)
        add(7, abs(fmt::format("node_modules/.pnpm/{0}@1.0.0/node_modules/{0}/x/f{1}.js", pkg(), serial++)),
            record::kRead);
    // A few renames (written to a temporary name, renamed into place).
    for (std::size_t i = 0; i < 100; ++i)
        b.rec.add_rename(abs(fmt::format("{}/dist/r{}.js.tmp", own, i)), abs(fmt::format("{}/dist/r{}.js", own, i)));
    return b;
}

double cpu_now()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int bench(const Options& o)
{
    fs::path dir;
    bool generated = o.dir.empty();
    auto t0 = std::chrono::steady_clock::now();
    if (generated) {
        dir = fs::temp_directory_path() / fmt::format("qk-bench-classify-{}", ::getpid());
        fs::remove_all(dir);
        generate(dir, o);
        std::fprintf(stderr, "generated %s (%.1f s)\n", dir.c_str(), seconds_since(t0));
    } else {
        dir = o.dir;
    }
    struct Cleanup {
        fs::path dir;
        bool on;
        ~Cleanup()
        {
            if (on) {
                std::error_code ec;
                fs::remove_all(dir, ec);
            }
        }
    } cleanup{dir, generated && !o.keep};

    t0 = std::chrono::steady_clock::now();
    auto session = or_fatal(key::Session::open(dir));
    const auto& ws = session->workspace();
    std::string task_id = o.task;
    if (task_id.empty()) {
        std::size_t best = 0, most = 0;
        for (std::size_t p = 0; p < ws.projects().size(); ++p) {
            std::size_t n = session->graph().transitive_dependencies(p).size();
            if (n > most && ws.projects()[p].find_target("build"))
                best = p, most = n;
        }
        task_id = ws.projects()[best].name + ":build";
    }
    auto colon = task_id.rfind(':');
    if (colon == std::string::npos)
        usage("--task takes project:target");
    workspace::TaskRequest request;
    request.targets = {task_id.substr(colon + 1)};
    request.projects = {task_id.substr(0, colon)};
    request.single_task = false;
    or_fatal(session->plan(request));
    for (std::size_t i = 0; i < session->tasks().tasks().size(); ++i)
        or_fatal(session->keys().key(i));
    auto ti = session->tasks().index(task_id);
    if (!ti)
        usage(("no task " + task_id).c_str());
    rules::Rules rules = or_fatal(sandbox::task_rules(*session, *ti, {}));
    std::size_t task_project = session->tasks().tasks()[*ti].project;
    std::fprintf(stderr, "session, plan, %zu keys and the rules of %s: %.2f s\n", session->tasks().tasks().size(),
                 task_id.c_str(), seconds_since(t0));

    std::string root = fs::canonical(ws.root()).string();
    t0 = std::chrono::steady_clock::now();
    Built built = build_recording(*session, task_project, root, o);
    const record::Recording& rec = built.rec;
    std::fprintf(stderr, "recording of %zu paths built: %.2f s\n", rec.paths().size(), seconds_since(t0));

    // What the rules make of the mix (untimed), and how many accesses classify judges at all.
    std::map<std::string, std::size_t> classes;
    std::size_t judged = 0;
    constexpr std::uint16_t kWrites = record::kWrite | record::kCreate | record::kRemove;
    for (const auto& [path, access] : rec.paths()) {
        rules::Verdict v;
        if (access & kWrites)
            v = rules.write(path, !(access & record::kWrite));
        else if (access & record::kRead)
            v = rules.read(path);
        else {
            ++classes[access & record::kProbe ? "(probe only: not judged)" : "(list only: not judged)"];
            continue;
        }
        ++judged;
        ++classes[std::string((access & kWrites) ? "write: " : "read: ") + rules::class_name(v.why)];
    }

    std::vector<double> times, cpu_times, rule_times;
    audit::TaskFindings findings;
    for (int r = 0; r < o.reps; ++r) {
        auto c0 = std::chrono::steady_clock::now();
        double cpu0 = cpu_now();
        findings = audit::classify(rec, rules, ws);
        cpu_times.push_back(cpu_now() - cpu0);
        times.push_back(seconds_since(c0));
        // The rules alone, as classify calls them (no spelled-path retry, no finding lists, no sort).
        c0 = std::chrono::steady_clock::now();
        std::size_t sink = 0;
        for (const auto& [path, access] : rec.paths()) {
            if (access & kWrites)
                sink += static_cast<std::size_t>(rules.write(path, !(access & record::kWrite)).finding);
            else if (access & record::kRead)
                sink += static_cast<std::size_t>(rules.read(path).finding);
        }
        rule_times.push_back(seconds_since(c0));
        if (sink == 0xffffffff)
            std::puts("");
    }
    for (int r = 0; r < o.loop; ++r)
        findings = audit::classify(rec, rules, ws);

    // Where the time goes, without a profiler: a walk of the recording that only touches each path
    // (the memory the classifier must read anyway), then the rules over each class of path alone.
    std::vector<double> walk_times;
    for (int r = 0; r < o.reps; ++r) {
        auto c0 = std::chrono::steady_clock::now();
        std::size_t sink = 0;
        for (const auto& [path, access] : rec.paths())
            sink += static_cast<unsigned char>(path.back()) + access;
        walk_times.push_back(seconds_since(c0));
        if (sink == 1)
            std::puts("");
    }
    struct Group {
        std::vector<std::pair<const std::string*, std::uint16_t>> items;
        double seconds = 0;
    };
    std::map<std::string, Group> groups;
    for (const auto& [path, access] : rec.paths()) {
        if (!(access & (kWrites | record::kRead)))
            continue;
        rules::Verdict v = (access & kWrites) ? rules.write(path, !(access & record::kWrite)) : rules.read(path);
        groups[std::string((access & kWrites) ? "write: " : "read: ") + rules::class_name(v.why)].items.emplace_back(
            &path, access);
    }
    for (auto& [name, g] : groups) {
        std::vector<double> ts;
        for (int r = 0; r < o.reps; ++r) {
            auto c0 = std::chrono::steady_clock::now();
            std::size_t sink = 0;
            for (const auto& [path, access] : g.items)
                sink += static_cast<std::size_t>(
                    ((access & kWrites) ? rules.write(*path, !(access & record::kWrite)) : rules.read(*path)).finding);
            ts.push_back(seconds_since(c0));
            if (sink == 0xffffffff)
                std::puts("");
        }
        g.seconds = median(ts);
    }

    double med = median(times), rmed = median(rule_times);
    std::size_t n = rec.paths().size();
    std::size_t dep_reads = 0;
    for (const auto& [p, v] : findings.dependency_reads)
        dep_reads += v.size();

    std::printf("workspace: %s (%zu projects, %zu files in the index)\n", generated ? "generated" : dir.c_str(),
                ws.projects().size(), session->files().files().size());
    std::printf("task: %s (%zu transitive dependency tasks planned)\n", task_id.c_str(),
                session->tasks().tasks().size() - 1);
    std::printf("recording: %zu distinct paths (%zu judged: read or written; the rest probes and listings), %zu "
                "aliases, %zu renames\n",
                n, judged, rec.aliases().size(), rec.renames().size());
    std::printf("\nthe mix as generated:\n");
    for (std::size_t i = 0; i < std::size(kMix); ++i)
        std::printf("  %8zu  %5.2f%%  %s\n", built.count[i], 100.0 * double(built.count[i]) / double(n), kMix[i].what);
    std::printf("\nas the rules class it:\n");
    std::vector<std::pair<std::size_t, std::string>> sorted;
    for (const auto& [k, v] : classes)
        sorted.emplace_back(v, k);
    std::sort(sorted.rbegin(), sorted.rend());
    for (const auto& [v, k] : sorted)
        std::printf("  %8zu  %5.2f%%  %s\n", v, 100.0 * double(v) / double(n), k.c_str());
    std::printf("\nfindings: readsOutsideInputs %zu, dependencyReads %zu, strayWrites %zu, unkeyedReads %zu, "
                "manifestReads %zu, toolchainReads %zu, tsconfigReads %zu\n",
                findings.reads_outside_inputs.size(), dep_reads, findings.stray_writes.size(),
                findings.unkeyed_reads.size(), findings.manifest_reads.size(), findings.toolchain_reads.size(),
                findings.tsconfig_reads.size());
    std::printf("\naudit::classify, %d reps (s):", o.reps);
    for (double t : times)
        std::printf(" %.3f", t);
    std::printf("\naudit::classify, thread CPU time, %d reps (s):", o.reps);
    for (double t : cpu_times)
        std::printf(" %.3f", t);
    std::printf("\nrules alone, %d reps (s):", o.reps);
    for (double t : rule_times)
        std::printf(" %.3f", t);
    std::printf("\n\nclassify: median %.3f s = %.0f accesses/s (%.0f judged accesses/s); %.0f ns per access\n", med,
                double(n) / med, double(judged) / med, med * 1e9 / double(n));
    double cmed = median(cpu_times);
    std::printf("classify by CPU time: median %.3f s = %.0f accesses/s\n", cmed, double(n) / cmed);
    std::printf("rules alone: median %.3f s = %.0f accesses/s (%.0f%% of classify)\n", rmed, double(n) / rmed,
                100.0 * rmed / med);
    std::printf("target >= 1,000,000 accesses/s: %s\n", double(n) / med >= 1e6 ? "met" : "NOT met");
    double wmed = median(walk_times);
    std::printf("\nbreakdown (medians of %d reps):\n  walking the recording, touching each path: %.3f s (%.0f ns per "
                "path, %.0f%% of classify)\n  the rules by class of path (each class timed alone; ns per access, "
                "total ms, share of the rules' time):\n",
                o.reps, wmed, wmed * 1e9 / double(n), 100.0 * wmed / med);
    double total = 0;
    for (const auto& [name, g] : groups)
        total += g.seconds;
    std::vector<std::pair<double, std::string>> by_time;
    for (const auto& [name, g] : groups)
        by_time.emplace_back(g.seconds, name);
    std::sort(by_time.rbegin(), by_time.rend());
    for (const auto& [t, name] : by_time) {
        const Group& g = groups[name];
        std::printf("    %7.0f ns  %7.1f ms  %5.1f%%  %8zu  %s\n", t * 1e9 / double(g.items.size()), t * 1e3,
                    100.0 * t / total, g.items.size(), name.c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        return bench(parse(argc, argv));
    } catch (const FatalError& e) {
        std::fprintf(stderr, "qk-bench-classify: %s\n", e.what());
        return e.exit_code();
    }
}
