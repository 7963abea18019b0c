// LocalCache: the task cache under <workspace>/.qk/cache. A successful task is stored under its key's hash
// (its outputs, its terminal output); a later run with the same key restores the outputs and replays the
// terminal output instead of running it. Entries appear whole or not at all (built aside, then renamed).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/cache_archive.hpp"
#include "qk/key/hash.hpp"
#include "qk/key/output_files.hpp"
#include "qk/key/warm_state.hpp"
#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

// What store() keeps of a task that succeeded.
struct CacheRecord {
    std::string task;                  // "project:target"
    std::vector<std::string> outputs;  // resolved output patterns, workspace-relative, "!" to exclude
    std::string terminal_output;       // the bytes the user saw, colours included
    std::chrono::milliseconds duration{};
    std::string qk_version;
    // How the result was produced (sandbox mode, recorder, findings): a JSON object kept as given, in
    // provenance.json and in archives; empty for none.
    std::string provenance;
    // The task's resolved warm paths (warm_state.hpp): what lies there as the task left it is kept with
    // the entry, apart from its outputs (a path the outputs name is an output, never warm state). Empty:
    // the task has none, and storing costs nothing more.
    std::vector<std::string> warm;
};

// One stored output, as listed in the entry's meta.json.
struct CachedFile {
    std::string path;  // workspace-relative
    OutputFile::Kind kind = OutputFile::Kind::file;
    std::uint32_t mode = 0;  // permission bits (07777); 0 for a symlink
    std::uint64_t size = 0;  // bytes of a file, of a symlink's target; 0 for a directory
    std::string target;      // a symlink's target
    Hash128 hash;            // a file's content, checked before the file is restored or trusted in place
};

// A usable entry: what restore() puts back and what the runner replays.
struct CacheHit {
    Hash128 hash;
    std::string task;
    std::vector<std::string> outputs;
    std::vector<CachedFile> files;  // sorted by path
    std::string terminal_output;
    std::chrono::milliseconds duration{};
    std::string qk_version;
    std::string created;     // when it was stored, RFC 3339 UTC
    std::string provenance;  // CacheRecord::provenance as stored; empty for none
};

// The cache of one workspace. Safe to use from several threads at once for different hashes; several
// processes may share it (two storing one hash keep the first entry).
class LocalCache {
public:
    static constexpr int schema_version = 1;

    // Opens (creating) <workspace_root>/.qk/cache; a new .qk gets a .gitignore of "*". Removes the build
    // directories left in .qk/cache/tmp by processes that died.
    static Result<LocalCache> open(const std::filesystem::path& workspace_root);
    // Where open() keeps the cache, relative to the workspace root; the sandbox keeps it read-only.
    static constexpr const char* kRelativeDirectory = ".qk/cache";
    static std::filesystem::path directory(const std::filesystem::path& workspace_root)
    {
        return workspace_root / kRelativeDirectory;
    }

    // The entry for `hash`, or nullopt. An entry that cannot be used (meta.json missing or corrupt, a file
    // it lists missing) is removed and is a miss; `miss_reason` then names the entry and says why, for a warning.
    Result<std::optional<CacheHit>> find(const Hash128& hash, std::string* miss_reason = nullptr) const;

    // What one entry's outputs may take on disk, their allocated blocks (Settings' QK_CACHE_MAX_ENTRY_SIZE;
    // CacheSettings::kDefaultMaxEntryBytes until set). Warm state gets what the outputs leave of it.
    void limit_entry(std::uint64_t max_bytes) { max_entry_bytes_ = max_bytes; }

    // Stores the outputs and terminal output of a task that succeeded. When an entry for `hash` exists
    // already (another run stored it first), it is kept and this one dropped. Refused, with nothing
    // written and the workspace untouched: outputs over the entry limit, or more than the disk can spare
    // (ErrorKind::cache_entry_too_big, errno ENOSPC), a file that sets a user or group id, a symbolic link
    // leading out of the workspace or out of its outputs (ErrorKind::cache_entry_unsafe; entry_check).
    // Files are stored sparse: holes stay holes. With warm paths, what they
    // hold is kept too, and the entry becomes the task's newest warm state (last_warm); warm state that
    // cannot be kept (a link on the way to it) leaves the entry without it, and `warm_note` says why.
    Status store(const Hash128& hash, const CacheRecord& record, std::string* warm_note = nullptr);

    // The results store() refused for what they hold (over the entry limit or the disk's room, a set-id
    // file, a link that points away), in the order refused: the run sums them up at its end, since each
    // task's own line scrolls away. Shared by copies of this cache; safe from several threads.
    struct Refusal {
        std::string task;
        std::string why;
    };
    std::vector<Refusal> refused() const;

    // The entry holding `task`'s newest warm state, or nullopt (none stored, or the entry is gone).
    std::optional<Hash128> last_warm(const std::string& task) const;

    // Puts the warm state kept with entry `hash` in place, for `task`, under each of its warm paths
    // `warm` (declared now) that the workspace does not hold: one it holds is kept, as the newer, and
    // one with a symbolic link at or on the way to it is left alone. Every path the entry lists must be
    // among `warm` and none among `outputs`, and every copy must match its hash, before anything is
    // written. nullopt: the entry keeps no warm state for `task` (stored without, from a shared cache).
    Result<std::optional<WarmRestored>> restore_warm(const Hash128& hash, const std::string& task,
                                                     const OutputSet& warm, const OutputSet& outputs) const;

    // Replaces the hit's outputs in the workspace with the stored ones: what the output patterns name now
    // is removed (a directory named whole, the files a glob matches), then the stored files are copied back
    // with their modes. Never writes through a symbolic link in the workspace.
    Status restore(const CacheHit& hit) const;

    // Removes the entry for `hash`, if there is one (a result keyed now by what its task read).
    void remove(const Hash128& hash) const { remove_entry(hash.hex()); }

    // Writes the entry for `hash` as an archive (cache_archive.hpp) to `sink`, or to the file `fd`. Only an
    // entry find() accepts is exported, each file read beneath the entry without following a link and
    // checked against its hash as it goes (one that changed since it was stored removes the entry). No
    // entry: an Error with errno ENOENT. What reached the sink before an Error is not an archive.
    Status export_entry(const Hash128& hash, const ArchiveSink& sink) const;
    Status export_entry(const Hash128& hash, int fd) const;

    // Starts importing an archive of the entry for `hash`, received in chunks (EntryImport::write). The
    // entry is kept packed, the archive as it came in one file, which find(), restore() and export_entry()
    // read and check whole each time (src/key/README.md).
    EntryImport begin_import(const Hash128& hash, const ArchiveLimits& limits = {});
    // The same for an archive read from `fd` to its end.
    Status import_entry(const Hash128& hash, int fd, const ArchiveLimits& limits = {});

    const std::filesystem::path& workspace_root() const { return root_; }
    const std::filesystem::path& dir() const { return dir_; }  // <workspace_root>/.qk/cache

private:
    LocalCache(std::filesystem::path root, std::filesystem::path dir, UniqueFd root_fd, UniqueFd dir_fd);
    void remove_entry(const std::string& hex) const;
    // Copies what the warm paths hold into `entry` (warm/, warm.json); false when it kept none.
    bool keep_warm(int entry, const CacheRecord& record, const OutputSet& outputs, std::uint64_t budget,
                   std::string* note) const;
    void remember_warm(const std::string& task, const Hash128& hash) const;
    std::string tmp_name(const std::string& hex) const;
    void note_refused(const std::string& task, const std::string& why) const;

    std::filesystem::path root_, dir_;
    UniqueFd root_fd_, dir_fd_;
    std::uint64_t max_entry_bytes_ = CacheSettings::kDefaultMaxEntryBytes;
    struct Refused;
    std::shared_ptr<Refused> refused_;
};

}  // namespace qk::key
