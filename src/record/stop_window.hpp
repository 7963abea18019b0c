// StopWindow: how a recorder keeps a Command's on_start/on_finish pair on every path out.
#pragma once

#include <utility>

#include "qk/record/recorder.hpp"

namespace qk::record {

// Calls a Command's on_start when constructed and its on_finish when closed (or destroyed), so that
// every path out of a recorder after the command started keeps the pair.
class StopWindow {
public:
    StopWindow(const Command& cmd, StopFn stop) : cmd_(cmd)
    {
        if (cmd_.on_start)
            cmd_.on_start(std::move(stop));
    }
    StopWindow(const StopWindow&) = delete;
    StopWindow& operator=(const StopWindow&) = delete;
    ~StopWindow() { close(); }

    void close()
    {
        if (open_ && cmd_.on_finish)
            cmd_.on_finish();
        open_ = false;
    }

private:
    const Command& cmd_;
    bool open_ = true;
};

}  // namespace qk::record
