// Benchmark: mapping a pnpm lockfile's snapshots to their node_modules/.pnpm directories and placing a
// million reads in packages, as the audit does for every recorded read under node_modules.
//   qk-bench-place-packages [--lockfile FILE] [--reads N] [--major 9|10] [--reps R]
// Prints the median of R reps of each step. See scripts/bench/place-packages and docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "qk/rules/installed_packages.hpp"
#include "qk/workspace/pnpm_store_index.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The reads a tool makes under node_modules: packages' own package.json (half), files inside packages,
// package.json of a dependency's link beside a package, and paths elsewhere in node_modules.
std::vector<std::string> make_reads(const qk::workspace::PnpmLock& lock, const qk::workspace::PnpmLayout& layout,
                                    std::size_t n)
{
    std::mt19937 rng(42);  // NOLINT(cert-msc51-cpp): the same reads every run, so runs compare
    std::vector<std::string> reads;
    reads.reserve(n);
    std::uniform_int_distribution<std::size_t> pick(0, lock.snapshots.size() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& s = lock.snapshots[pick(rng)];
        std::string base = "node_modules/.pnpm/" + qk::workspace::pnpm_dir_name(s.key, layout) + "/node_modules/";
        switch (i % 10) {
        case 0: case 1: case 2: case 3: case 4: reads.push_back(base + s.name + "/package.json"); break;
        case 5: case 6: reads.push_back(base + s.name + "/lib/index.js"); break;
        case 7: reads.push_back(base + "some-dependency/package.json"); break;
        case 8: reads.push_back("node_modules/.pnpm/node_modules/" + s.name + "/package.json"); break;
        default: reads.push_back("node_modules/.cache/babel-loader/" + std::to_string(i) + ".json"); break;
        }
    }
    return reads;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string lockfile = "../shared/data/pnpm-lock-v9-large.yaml";
    std::size_t n = 1'000'000;
    int major = 10, reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--lockfile") lockfile = argv[i + 1];
        else if (a == "--reads") n = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--major") major = static_cast<int>(std::strtol(argv[i + 1], nullptr, 10));
        else if (a == "--reps") reps = std::max(1, static_cast<int>(std::strtol(argv[i + 1], nullptr, 10)));
        else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    auto tmp = std::filesystem::temp_directory_path() / fmt::format("qk-bench-place-{}", ::getpid());
    std::filesystem::create_directories(tmp / "node_modules");
    std::ofstream(tmp / "node_modules" / ".modules.yaml")
        << fmt::format("nodeLinker: isolated\npackageManager: pnpm@{}.0.0\nvirtualStoreDir: .pnpm\n", major);

    std::vector<double> parse_ms, map_ms, place_ms;
    std::size_t snapshots = 0, placed = 0;
    for (int r = 0; r < reps; ++r) {
        auto t0 = Clock::now();
        auto lock = qk::workspace::parse_pnpm_lock(lockfile);
        if (!lock) {
            std::fprintf(stderr, "%s\n", lock.error().message.c_str());
            return 1;
        }
        parse_ms.push_back(ms_since(t0));
        snapshots = lock->snapshots.size();
        auto t1 = Clock::now();
        auto installed = qk::rules::InstalledPackages::load(tmp, &*lock);
        if (!installed || !*installed) {
            std::fprintf(stderr, "cannot load the install\n");
            return 1;
        }
        map_ms.push_back(ms_since(t1));
        std::vector<std::string> reads = make_reads(*lock, {major, 120}, n);
        auto t2 = Clock::now();
        std::size_t found = 0;
        for (const std::string& read : reads)
            found += (*installed)->manifest_of(read).has_value();
        place_ms.push_back(ms_since(t2));
        placed = found;
    }
    std::filesystem::remove_all(tmp);
    double parse = median(parse_ms), map = median(map_ms), place = median(place_ms);
    fmt::print("lockfile {}: {} snapshots, pnpm {} names\n", lockfile, snapshots, major);
    fmt::print("parse the lockfile          {:8.1f} ms\n", parse);
    fmt::print("map every snapshot's dir    {:8.1f} ms\n", map);
    fmt::print("place {} reads        {:8.1f} ms  ({:.1f} M reads/s, {} package.json found)\n", n, place,
               n / place / 1000.0, placed);
    fmt::print("map + place                 {:8.1f} ms   (parse + map + place {:.1f} ms; median of {} reps)\n",
               map + place, parse + map + place, reps);
    return 0;
}
