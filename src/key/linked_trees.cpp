// The trees that held symbolic links to directories lead to: a depth-first walk from the directory
// the link resolves to, in name order, entering each directory once (by device and inode), whether it
// is reached as a subdirectory or through a nested link. Entries are kept with their paths relative to
// the link, then sorted, hashed and folded into one hash per tree. Files the file index holds take the
// index's hash (hashed in one batch, in parallel, with the persistent cache); others are read here.
#include "linked_trees.hpp"

#include "key_parts.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

namespace {

// Resolving a link fails with these when it leads nowhere: such a link is keyed by its text alone.
bool leads_nowhere(int err)
{
    return err == ENOENT || err == ENOTDIR || err == ELOOP;
}

// realpath(3); the Error keeps errno.
Result<std::string> resolve(const std::string& path)
{
    std::unique_ptr<char, decltype(&std::free)> p(::realpath(path.c_str(), nullptr), &std::free);
    if (!p)
        return sys_error("cannot resolve " + path);
    return std::string(p.get());
}

struct Entry {
    enum class Kind : std::uint8_t {
        file,                     // a regular file: its content
        directory_again,          // a subdirectory entered already elsewhere in the tree
        link_to_directory,        // a nested link, walked: what it holds follows under its path
        link_to_directory_again,  // a nested link to a directory entered already (an ancestor: a cycle)
        link_to_file,             // a nested link to a regular file: the file's content
        link_elsewhere,           // a nested link leading nowhere, or to no file or directory: its text
    };
    std::string path;  // relative to the link
    Kind kind = Kind::file;
    std::string text;           // a link's
    Hash128 content;            // a file's, or the file a link leads to
    std::int64_t indexed = -1;  // the file index's number for that file, when the index hashes it
};

const char* kind_name(Entry::Kind k)
{
    switch (k) {
    case Entry::Kind::file: return "file";
    case Entry::Kind::directory_again: return "directory-again";
    case Entry::Kind::link_to_directory: return "directory";
    case Entry::Kind::link_to_directory_again: return "directory-again";
    case Entry::Kind::link_to_file: return "file";
    case Entry::Kind::link_elsewhere: return "elsewhere";
    }
    return "";
}

class TreeWalker {
public:
    TreeWalker(std::string_view link, const std::string& root, FileIndex& files)
        : link_(link), root_(root), files_(files)
    {
    }

    Result<LinkedTreeWalk> run(const std::string& target)
    {
        UniqueFd fd(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!fd.valid())
            return unreadable(target, errno);
        QK_TRY_STATUS(first_visit(fd.get(), target));
        targets_.push_back(target);
        QK_TRY_STATUS(directory(fd.get(), target, ""));
        return finish();
    }

private:
    Error unreadable(const std::string& dir, int err) const
    {
        return Error{fmt::format("cannot read the directory {} in the tree that the symbolic link {} leads to: {}; "
                                 "the key holds that tree, so make it readable, or leave the link out of the "
                                 "task's inputs",
                                 dir, link_, std::strerror(err)),
                     err};
    }
    Error unhashable(const Error& e) const
    {
        return with_message(e, fmt::format("in the tree that the symbolic link {} leads to: {}", link_, e.message));
    }

    // Whether the directory open as `fd` is entered for the first time in this walk.
    Result<bool> first_visit(int fd, const std::string& abs)
    {
        struct stat st;
        if (::fstat(fd, &st) != 0)
            return unreadable(abs, errno);
        return visited_.emplace(st.st_dev, st.st_ino).second;
    }

    // The content hash of the regular file at `abs` (canonical), into `e`: the index's when it holds it.
    Status content(const std::string& abs, Entry& e)
    {
        if (auto rel = relative_under(abs, root_)) {
            if (auto i = files_.find(*rel)) {
                e.indexed = static_cast<std::int64_t>(*i);
                indexed_.push_back(static_cast<std::uint32_t>(*i));
                return {};
            }
        }
        auto h = hash_file(abs);
        if (!h)
            return unhashable(h.error());
        e.content = *h;
        return {};
    }

    Status directory(int fd, const std::string& abs, const std::string& rel)
    {
        QK_TRY(names, list(fd, abs));
        for (auto& [name, type] : *names) {
            if (is_special_dir(name))
                continue;  // as the file index: never .git, .qk or node_modules
            std::string child_abs = abs == "/" ? "/" + name : abs + '/' + name;
            std::string child_rel = rel + name;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                    if (errno == ENOENT)
                        continue;  // gone since it was listed
                    return unreadable(abs, errno);
                }
                type = S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : 0;
            }
            if (type == DT_REG) {
                Entry& e = entries_.emplace_back();
                e.path = std::move(child_rel);
                QK_TRY_STATUS(content(child_abs, e));
            } else if (type == DT_DIR) {
                UniqueFd child(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!child.valid())
                    return unreadable(child_abs, errno);
                QK_TRY(first, first_visit(child.get(), child_abs));
                if (*first)
                    QK_TRY_STATUS(directory(child.get(), child_abs, child_rel + '/'));
                else
                    entries_.push_back({std::move(child_rel), Entry::Kind::directory_again, {}, {}, -1});
            } else if (type == DT_LNK) {
                QK_TRY_STATUS(nested_link(fd, name, child_abs, child_rel));
            }
            // Sockets, FIFOs and devices hold no content to key, as in the file index.
        }
        return {};
    }

    Status nested_link(int dir_fd, const std::string& name, const std::string& abs, const std::string& rel)
    {
        auto text = read_link_at(dir_fd, name.c_str());
        if (!text) {
            if (text.error().sys_errno == ENOENT)
                return {};  // gone since it was listed
            return unhashable(sys_error("cannot read the symbolic link " + abs, text.error().sys_errno));
        }
        Entry e{rel, Entry::Kind::link_elsewhere, std::move(*text), {}, -1};
        auto to = resolve(abs);  // relative to the link's directory, which is canonical
        if (!to) {
            if (!leads_nowhere(to.error().sys_errno))
                return unhashable(to.error());
            entries_.push_back(std::move(e));
            return {};
        }
        struct stat st;
        if (::stat(to->c_str(), &st) != 0) {
            if (!leads_nowhere(errno))
                return unhashable(sys_error("cannot stat " + *to));
        } else if (S_ISDIR(st.st_mode)) {
            UniqueFd fd(::open(to->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            if (!fd.valid())
                return unreadable(*to, errno);
            targets_.push_back(*to);
            QK_TRY(first, first_visit(fd.get(), *to));
            e.kind = *first ? Entry::Kind::link_to_directory : Entry::Kind::link_to_directory_again;
            entries_.push_back(std::move(e));
            if (*first)
                QK_TRY_STATUS(directory(fd.get(), *to, rel + '/'));
            return {};
        } else if (S_ISREG(st.st_mode)) {
            e.kind = Entry::Kind::link_to_file;
            target_files_.push_back(*to);
            QK_TRY_STATUS(content(*to, e));
        }
        entries_.push_back(std::move(e));
        return {};
    }

    // The directory's entries, sorted by name, with the type the file system reports.
    Result<std::vector<std::pair<std::string, unsigned char>>> list(int fd, const std::string& abs)
    {
        UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
        if (!copy.valid())
            return unreadable(abs, errno);
        struct CloseDir {
            void operator()(DIR* d) const { ::closedir(d); }
        };
        std::unique_ptr<DIR, CloseDir> dir(::fdopendir(copy.get()));
        if (!dir)
            return unreadable(abs, errno);
        (void)copy.release();  // the DIR owns it now
        std::vector<std::pair<std::string, unsigned char>> out;
        for (;;) {
            errno = 0;
            struct dirent* d = ::readdir(dir.get());
            if (!d) {
                if (errno != 0)
                    return unreadable(abs, errno);
                break;
            }
            std::string_view name(d->d_name);
            if (name != "." && name != "..")
                out.emplace_back(std::string(name), d->d_type);
        }
        std::sort(out.begin(), out.end());
        return out;
    }

    Result<LinkedTreeWalk> finish()
    {
        if (Status s = files_.hash(indexed_); !s)
            return unhashable(s.error());
        std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
        auto out_files = std::make_shared<std::vector<KeyFile>>();
        out_files->reserve(entries_.size());
        Hasher tree;
        tree.field("qk:linked-tree").field(std::uint64_t(entries_.size()));
        for (Entry& e : entries_) {
            if (e.indexed >= 0)
                e.content = files_.hash_of(static_cast<std::size_t>(e.indexed));
            Hash128 h = e.content;
            if (e.kind == Entry::Kind::directory_again)
                h = Hasher().field("qk:directory").field(kind_name(e.kind)).digest();
            else if (e.kind != Entry::Kind::file)
                h = Hasher().field("qk:symlink").field(e.text).field(kind_name(e.kind)).field(e.content).digest();
            tree.field(e.path).field(h);
            out_files->push_back({std::move(e.path), h});
        }
        auto unique_sorted = [](std::vector<std::string>& v) {
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
        };
        unique_sorted(targets_);
        unique_sorted(target_files_);
        return LinkedTreeWalk{std::move(targets_), std::move(target_files_), std::move(out_files), tree.digest()};
    }

    std::string_view link_;
    std::string root_;  // the canonical workspace root
    FileIndex& files_;
    std::set<std::pair<dev_t, ino_t>> visited_;
    std::vector<Entry> entries_;
    std::vector<std::uint32_t> indexed_;
    std::vector<std::string> targets_, target_files_;
};

}  // namespace

Result<LinkedTreeWalk> walk_linked_tree(const std::string& target, std::string_view link, const std::string& root,
                                        FileIndex& files)
{
    return TreeWalker(link, root, files).run(target);
}

Result<std::string> linked_directory(const std::string& root, const std::string& link)
{
    auto to = resolve(root == "/" ? "/" + link : root + '/' + link);
    if (!to) {
        if (leads_nowhere(to.error().sys_errno))
            return std::string();
        return error(fmt::format("cannot resolve the symbolic link {} in the workspace {}: {}; the key holds what a "
                                 "link to a directory leads to, so make its target reachable, or leave the link "
                                 "out of the task's inputs",
                                 link, root, std::strerror(to.error().sys_errno)));
    }
    struct stat st;
    if (::stat(to->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return std::string();
    return *to;
}

Result<std::shared_ptr<const KeyLinkedTree>> KeyBuilder::State::linked_tree(std::uint32_t file)
{
    const std::string& link = files.files()[file];
    std::optional<std::string> root;
    {
        std::lock_guard l(mutex);
        if (auto it = linked.find(file); it != linked.end())
            return it->second;
        root = canonical_root;
    }
    if (!root) {
        auto r = resolve(graph.workspace().root().string());
        if (!r)
            return error(fmt::format("cannot resolve the workspace root {}: {}", graph.workspace().root().string(),
                                     r.error().message));
        root = *r;
        std::lock_guard l(mutex);
        canonical_root = root;
    }
    QK_TRY(target, linked_directory(*root, link));
    std::shared_ptr<const KeyLinkedTree> out;
    if (!target->empty()) {
        std::shared_ptr<const LinkedTreeWalk> walk;
        {
            std::lock_guard l(mutex);
            if (auto it = trees.find(*target); it != trees.end())
                walk = it->second;
        }
        if (!walk) {
            QK_TRY(walked, walk_linked_tree(*target, link, *root, files));
            std::lock_guard l(mutex);
            walk = trees.emplace(*target, std::make_shared<const LinkedTreeWalk>(std::move(*walked))).first->second;
        }
        auto tree = std::make_shared<KeyLinkedTree>();
        tree->link = link;
        tree->target = *target;
        tree->targets = walk->targets;
        tree->target_files = walk->target_files;
        tree->files = walk->files;
        tree->hash = walk->hash;
        out = std::move(tree);
    }
    std::lock_guard l(mutex);
    return linked.emplace(file, std::move(out)).first->second;
}

void linked_trees(std::vector<LinkedTreeRef> refs, TaskKey& key)
{
    // Index numbers follow the paths' order: sorted numbers give trees sorted by link.
    std::sort(refs.begin(), refs.end(), [](const LinkedTreeRef& a, const LinkedTreeRef& b) { return a.link < b.link; });
    refs.erase(std::unique(refs.begin(), refs.end(),
                           [](const LinkedTreeRef& a, const LinkedTreeRef& b) { return a.link == b.link; }),
               refs.end());
    key.linked_trees.reserve(refs.size());
    for (LinkedTreeRef& r : refs)
        key.linked_trees.push_back(std::move(r.tree));
}

}  // namespace qk::key
