// The walk of the directory a held symbolic link leads to (KeyLinkedTree): its files and nested links,
// their hashes and the directories and files reached. KeyBuilder::State caches one walk per directory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/key/task_key.hpp"
#include "qk/util/result.hpp"

namespace qk::key {

struct LinkedTreeWalk {
    std::vector<std::string> targets;       // KeyLinkedTree::targets
    std::vector<std::string> target_files;  // KeyLinkedTree::target_files
    std::shared_ptr<const std::vector<KeyFile>> files;
    Hash128 hash;
};

// Walks `target` (an absolute, canonical directory) as KeyLinkedTree says. `root` is the workspace
// root, absolute and canonical: a file under it that `files` holds is hashed by the index. `link` names
// the link in errors. Errors: a directory of the tree that cannot be read, a file that cannot be
// hashed, a nested link that cannot be resolved for another reason than leading nowhere.
Result<LinkedTreeWalk> walk_linked_tree(const std::string& target, std::string_view link, const std::string& root,
                                        FileIndex& files);

// Where the workspace-relative `link` leads, absolute and canonical, when that is a directory; "" when it
// leads nowhere (dangling, a loop of links) or to something else. Errors: it cannot be resolved.
Result<std::string> linked_directory(const std::string& root, const std::string& link);

}  // namespace qk::key
