// scripts/bench/stat-cost: lstat every path listed on stdin serially, then with N threads (interleaved by
// index), then statx serially; prints the milliseconds of each. What the key's input stats would save
// if done in parallel or by statx (docs/benchmarks.md, "Scale").
#include <fcntl.h>
#include <sys/stat.h>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>
int main(int argc, char** argv)
{
    std::vector<std::string> paths;
    for (std::string line; std::getline(std::cin, line);)
        paths.push_back(line);
    int threads = argc > 1 ? std::stoi(argv[1]) : 2;
    auto time = [&](auto&& fn) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    struct stat st;
    double serial = time([&] { for (auto& p : paths) ::lstat(p.c_str(), &st); });
    double par = time([&] {
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] { struct stat s; for (size_t i = t; i < paths.size(); i += threads) ::lstat(paths[i].c_str(), &s); });
        for (auto& t : ts) t.join();
    });
    struct statx sx;
    double sxt = time([&] { for (auto& p : paths) ::statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx); });
    std::printf("%zu paths: lstat serial %.1f ms, %d threads %.1f ms, statx serial %.1f ms\n", paths.size(), serial, threads, par, sxt);
}
