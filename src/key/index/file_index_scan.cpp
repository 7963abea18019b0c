// FileIndex::scan's walk, on every core: the top of the tree is listed level by level until there are
// enough subtrees to share out, the subtrees are walked in parallel (one Walker each), and the pieces
// are put back together in order. The result is the same as one walk from the root; listing a
// directory costs mostly kernel time (getdents on ext4 builds a hash tree per directory), which is
// why a second core helps.
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <system_error>
#include <thread>

#include "file_index_walk.hpp"
#include "qk/key/file_index.hpp"

namespace qk::key {

namespace {

// Subtrees per thread wanted before the parallel walk starts: enough to even out unequal ones.
constexpr std::size_t subtrees_per_thread = 8;
// Levels listed one at a time, at most, looking for that many.
constexpr int max_split_depth = 4;

// A directory of the split: listed alone (children filled in) or walked whole as a subtree.
struct Piece {
    WalkStart start;
    WalkOutput out;
    Status status;
    std::vector<std::unique_ptr<Piece>> children;  // each goes before out.files[child->start.position]
};

// Opens a piece's directory from the root; an empty descriptor when it cannot be read (skipped).
Result<UniqueFd> open_piece(int root_fd, const Piece& piece, const WalkContext& context)
{
    if (piece.start.path.empty())
        return UniqueFd(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
    std::string dir = piece.start.path.substr(0, piece.start.path.size() - 1);
    return Walker::open_dir(root_fd, dir.c_str(), dir, context);
}

void flatten(Piece& piece, std::vector<std::string>& files, std::vector<std::int32_t>& owners,
             std::vector<std::string>& specials)
{
    for (std::string& s : piece.out.specials)
        specials.push_back(std::move(s));
    std::size_t done = 0;
    auto take = [&](std::size_t until) {
        for (; done < until; ++done) {
            files.push_back(std::move(piece.out.files[done]));
            owners.push_back(piece.out.owners[done]);
        }
    };
    for (auto& child : piece.children) {
        take(child->start.position);
        flatten(*child, files, owners, specials);
    }
    take(piece.out.files.size());
}

}  // namespace

Status FileIndex::walk(int root_fd)
{
    const WalkContext context(root_);
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());

    Piece root;
    root.start.owner = context.root_owner;
    std::vector<Piece*> frontier{&root};
    for (int level = 0; level < max_split_depth && !frontier.empty() && frontier.size() < threads * subtrees_per_thread;
         ++level) {
        std::vector<Piece*> next;
        for (Piece* piece : frontier) {
            QK_TRY(fd, open_piece(root_fd, *piece, context));
            if (!fd->valid())
                continue;
            std::vector<WalkStart> subdirs;
            QK_TRY_STATUS(Walker(context, piece->start, piece->out).expand(fd->get(), subdirs));
            for (WalkStart& sub : subdirs) {
                piece->children.push_back(std::make_unique<Piece>());
                piece->children.back()->start = std::move(sub);
                next.push_back(piece->children.back().get());
            }
        }
        frontier = std::move(next);
    }

    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < frontier.size();) {
            Piece& piece = *frontier[i];
            auto fd = open_piece(root_fd, piece, context);
            if (!fd)
                piece.status = fd.error();
            else if (fd->valid())
                piece.status = Walker(context, piece.start, piece.out).walk(fd->get());
        }
    };
    std::vector<std::thread> workers;
    for (std::size_t w = 1; w < std::min(threads, frontier.size()); ++w) {
        try {
            workers.emplace_back(work);
        } catch (const std::system_error&) {
            break;  // the threads running (and this one) walk the rest
        }
    }
    work();
    for (auto& t : workers)
        t.join();
    for (Piece* piece : frontier)
        if (!piece->status)
            return piece->status;

    flatten(root, files_, owner_, specials_);
    std::sort(specials_.begin(), specials_.end());
    return {};
}

}  // namespace qk::key
