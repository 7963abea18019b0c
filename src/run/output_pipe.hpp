// A task's output as it runs: each command writes into an OutputPipe of its own, read on a thread of
// its own; TaskOutput joins the lines of all of them, each line whole, for the display and the cache.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"
#include "line_splitter.hpp"

namespace qk::run {

class TaskOutput {
public:
    using LineFn = std::function<void(std::string_view line)>;  // the text, without its line end

    explicit TaskOutput(LineFn on_line) : on_line_(std::move(on_line)) {}

    // From any reader thread: a piece as LineSplitter cuts it.
    void add(std::string_view piece);
    // The bytes so far, as the commands wrote them (only lines of parallel commands are reordered).
    std::string take();

private:
    std::mutex mutex_;  // the callback is called under it, so the kept bytes and the lines agree
    LineFn on_line_;
    std::string raw_;
};

class OutputPipe {
public:
    static Result<std::unique_ptr<OutputPipe>> open(TaskOutput& output);
    OutputPipe(const OutputPipe&) = delete;
    OutputPipe& operator=(const OutputPipe&) = delete;
    ~OutputPipe();

    // The end the command writes to (close-on-exec here; the launcher puts it on 1 and 2).
    int write_fd() const { return write_.get(); }

    // Call once the command has exited: reads what it left in the pipe, without waiting for the
    // processes it left behind that still hold the pipe open, and stops the reader.
    void finish();

private:
    OutputPipe(TaskOutput& output, UniqueFd read, UniqueFd write, UniqueFd wake);
    void read_loop();
    // Reads without waiting until the pipe is empty; false at end of file.
    bool drain(std::size_t limit);

    TaskOutput& output_;
    UniqueFd read_, write_, wake_;
    LineSplitter splitter_;
    std::thread reader_;
};

}  // namespace qk::run
