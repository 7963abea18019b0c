// qk's commands: run-many, affected, run, show, doctor and report, each with its options declared on the
// app (CLI11 keeps pointers to them, so a Commands stays where main made it) and what it runs once parsed.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace qk::cli {

class Commands {
public:
    explicit Commands(CLI::App& app);  // declares every command and -C on `app`
    ~Commands();
    Commands(const Commands&) = delete;
    Commands& operator=(const Commands&) = delete;

    // The one command parsed (show when no other is: CLI11 requires one).
    int run();

private:
    struct Parts;
    std::unique_ptr<Parts> parts_;
};

}  // namespace qk::cli
