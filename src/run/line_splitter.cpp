#include "line_splitter.hpp"

namespace qk::run {

void LineSplitter::feed(std::string_view data, const PieceFn& fn)
{
    while (!data.empty()) {
        std::size_t nl = data.find('\n');
        std::size_t take = nl == std::string_view::npos ? data.size() : nl + 1;
        std::size_t room = kMaxLine - partial_.size();
        if (take > room) {
            partial_.append(data.substr(0, room));
            data.remove_prefix(room);
            fn(partial_);
            partial_.clear();
            continue;
        }
        if (nl == std::string_view::npos) {
            partial_.append(data);
            return;
        }
        if (partial_.empty()) {
            fn(data.substr(0, take));  // the common case, without a copy
        } else {
            partial_.append(data.substr(0, take));
            fn(partial_);
            partial_.clear();
        }
        data.remove_prefix(take);
    }
}

void LineSplitter::flush(const PieceFn& fn)
{
    if (partial_.empty())
        return;
    fn(partial_);
    partial_.clear();
}

std::string_view line_text(std::string_view piece)
{
    if (!piece.empty() && piece.back() == '\n')
        piece.remove_suffix(1);
    if (!piece.empty() && piece.back() == '\r')
        piece.remove_suffix(1);
    return piece;
}

void for_each_line(std::string_view text, const std::function<void(std::string_view line)>& fn)
{
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::size_t take = nl == std::string_view::npos ? text.size() : nl + 1;
        fn(line_text(text.substr(0, take)));
        text.remove_prefix(take);
    }
}

}  // namespace qk::run
