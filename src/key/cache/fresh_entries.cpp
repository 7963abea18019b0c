#include "fresh_entries.hpp"

#include <mutex>
#include <unordered_map>

namespace qk::key::fresh {

namespace {

struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec ctime{};

    explicit Identity(const struct stat& st) : dev(st.st_dev), ino(st.st_ino), size(st.st_size), ctime(st.st_ctim) {}
    bool operator==(const Identity& o) const
    {
        return dev == o.dev && ino == o.ino && size == o.size && ctime.tv_sec == o.ctime.tv_sec &&
               ctime.tv_nsec == o.ctime.tv_nsec;
    }
};

struct Kept {
    Identity id;
    Entry entry;
};

// One for the process: entries are known by their file, whichever LocalCache imported them.
struct Table {
    std::mutex mutex;
    std::unordered_map<std::string, Kept> by_hex;
    std::size_t bytes = 0;

    void erase_locked(std::unordered_map<std::string, Kept>::iterator it)
    {
        bytes -= it->second.entry.archive->size();
        by_hex.erase(it);
    }
};

Table& table()
{
    static Table t;
    return t;
}

}  // namespace

void keep(const std::string& hex, const struct stat& st, std::string archive, CacheHit hit)
{
    if (archive.size() > max_entry_bytes)
        return;
    Table& t = table();
    std::lock_guard lock(t.mutex);
    if (auto it = t.by_hex.find(hex); it != t.by_hex.end())
        t.erase_locked(it);
    if (t.bytes + archive.size() > max_total_bytes)
        return;
    t.bytes += archive.size();
    auto bytes = std::make_shared<const std::string>(std::move(archive));
    t.by_hex.insert_or_assign(hex, Kept{Identity(st), Entry{std::move(bytes), std::move(hit)}});
}

std::optional<Entry> find(const std::string& hex, const struct stat& st)
{
    Table& t = table();
    std::lock_guard lock(t.mutex);
    auto it = t.by_hex.find(hex);
    if (it == t.by_hex.end() || !(it->second.id == Identity(st)))
        return std::nullopt;
    return it->second.entry;
}

std::optional<Entry> take(const std::string& hex, const struct stat& st)
{
    Table& t = table();
    std::lock_guard lock(t.mutex);
    auto it = t.by_hex.find(hex);
    if (it == t.by_hex.end())
        return std::nullopt;
    // Gone either way: a file that is no longer the one imported will not be again.
    t.bytes -= it->second.entry.archive->size();
    std::optional<Entry> out;
    if (it->second.id == Identity(st))
        out = std::move(it->second.entry);
    t.by_hex.erase(it);
    return out;
}

void forget(const std::string& hex)
{
    Table& t = table();
    std::lock_guard lock(t.mutex);
    if (auto it = t.by_hex.find(hex); it != t.by_hex.end())
        t.erase_locked(it);
}

}  // namespace qk::key::fresh
