// Warm state kept with an entry: what the task's warm paths hold as it left them, copied into warm/ beside
// files/ and listed in warm.json, and, per task, which entry holds its newest (<cache>/warm/<task hash>).
// Warm state is a tool's convenience, not a result: what cannot be kept leaves the entry without it and
// never fails the store.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cache_copy.hpp"
#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "entry_check.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/atomic_file.hpp"

namespace qk::key {

namespace {

constexpr const char* kWarmDir = "warm";    // in an entry: the copies; in the cache: the per-task pointers
constexpr const char* kWarmDoc = "warm.json";

// <cache>/warm/<hash of the task id>: task ids hold ':' and '/'.
std::string pointer_name(const std::string& task)
{
    return fmt::format("{}/{}", kWarmDir, hash_bytes(task).hex());
}

std::string pointer_text(const std::string& task, const Hash128& hash)
{
    return fmt::format("qk warm 1\t{}\t{}\n", hash.hex(), task);
}

}  // namespace

bool LocalCache::keep_warm(int entry, const CacheRecord& record, const OutputSet& outputs, std::uint64_t budget,
                           std::string* note) const
{
    auto skip = [&](const std::string& why) {
        if (note)
            *note = "its warm state was not kept: " + why;
        (void)cache_fs::remove_tree(entry, kWarmDir, kWarmDir);
        (void)::unlinkat(entry, kWarmDoc, 0);
        return false;
    };
    auto warm = OutputSet::compile(record.warm);
    if (!warm)
        return skip(warm.error().message);
    auto found = collect_output_files(root_fd_.get(), *warm);
    if (!found)
        return skip(found.error().message);
    if (::mkdirat(entry, kWarmDir, 0755) != 0)
        return skip(sys_error("cannot create warm/ in the entry").message);
    UniqueFd copies(::openat(entry, kWarmDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!copies.valid())
        return skip(sys_error("cannot open warm/ in the entry").message);
    cache_meta::WarmDoc doc{record.task, record.warm, {}};
    cache_copy::EntryWriter writer(root_fd_.get(), copies.get(), budget);
    for (const OutputFile& f : *found) {
        // An output is the result's, restored as one: a warm path never changes what the outputs are.
        if (outputs.contains(f.path))
            continue;
        auto copied = writer.add(f);
        if (!copied)
            return skip(copied.error().message);
        // Restored as it is stored: no set-id bit comes back from the cache, as with outputs.
        if (std::optional<std::string> why = entry_check::mode_refused(*copied))
            return skip(*why);
        doc.files.push_back(std::move(*copied));
    }
    if (doc.files.empty()) {
        // Nothing to keep (the tool made no state this run): the task's newest warm state stays the one
        // an earlier entry holds, rather than this empty one.
        (void)cache_fs::remove_tree(entry, kWarmDir, kWarmDir);
        return false;
    }
    auto text = cache_meta::write_warm(doc);
    if (!text)
        return skip(text.error().message);
    if (Status s = cache_fs::write_file_at(entry, kWarmDoc, *text, 0644); !s)
        return skip(s.error().message);
    return true;
}

void LocalCache::remember_warm(const std::string& task, const Hash128& hash) const
{
    // Only a hint for a later miss: losing it costs a cold start, never a wrong result.
    if (::mkdirat(dir_fd_.get(), kWarmDir, 0755) != 0 && errno != EEXIST)
        return;
    (void)write_file_atomically((dir_ / pointer_name(task)).string(), pointer_text(task, hash), {0644, false});
}

std::optional<Hash128> LocalCache::last_warm(const std::string& task) const
{
    auto text = cache_fs::read_file_at(dir_fd_.get(), pointer_name(task));
    if (!text)
        return std::nullopt;
    // "qk warm 1\t<hex>\t<task>\n": the task named in full, as two ids could share a file name's hash.
    std::string_view rest = *text;
    constexpr std::string_view head = "qk warm 1\t";
    if (!rest.starts_with(head) || rest.size() < head.size() + 33)
        return std::nullopt;
    rest.remove_prefix(head.size());
    auto hash = parse_hash(rest.substr(0, 32));
    if (!hash || rest.substr(32) != "\t" + task + "\n")
        return std::nullopt;
    return hash;
}

}  // namespace qk::key
