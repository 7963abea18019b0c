#include "cache_packed.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cache_copy.hpp"
#include "entry_reader.hpp"
#include "qk/util/io.hpp"

namespace qk::key::packed {

namespace {

bool same_file(const CachedFile& a, const CachedFile& b)
{
    return a.path == b.path && a.kind == b.kind && a.mode == b.mode && a.size == b.size && a.target == b.target &&
           a.hash == b.hash;
}

// What every full reading asks first: the archive lists what find() returned of it, not something
// put in its place since.
struct Matching : EntryReader::Visitor {
    explicit Matching(const CacheHit& hit) : hit(hit) {}
    Status on_meta(const cache_meta::Parsed& meta) override
    {
        const auto& got = meta.hit.files;
        bool same = meta.hit.outputs == hit.outputs && got.size() == hit.files.size() &&
                    std::equal(got.begin(), got.end(), hit.files.begin(), same_file);
        if (!same)
            return error("the packed entry changed since it was found", ErrorKind::cache_entry_corrupt);
        return {};
    }
    const CacheHit& hit;
};

// Writes each regular file where it lands as its bytes arrive; directories and links go in the list's
// order, before the file that follows them and after the last file.
struct Writer : Matching {
    Writer(const CacheHit& hit, int root_fd) : Matching(hit), restorer(root_fd, -1) {}
    Status upto(std::size_t end)
    {
        for (; next < end; ++next)
            if (hit.files[next].kind != OutputFile::Kind::file)
                QK_TRY_STATUS(restorer.put_back(hit.files[next]));
        return {};
    }
    Status on_file(std::size_t index) override
    {
        QK_TRY_STATUS(upto(index));
        current = index;
        next = index + 1;
        QK_TRY(made, restorer.create(hit.files[index]));
        out = std::move(*made);
        return {};
    }
    Status on_data(std::string_view bytes) override
    {
        if (Status s = write_all(out.get(), bytes); !s)
            return sys_error(fmt::format("cannot write {}", hit.files[current].path), s.error().sys_errno);
        return {};
    }
    Status on_file_end() override
    {
        Status sealed = cache_copy::Restorer::seal(out.get(), hit.files[current]);
        out.reset();
        return sealed;
    }
    cache_copy::Restorer restorer;
    std::size_t next = 0, current = 0;
    UniqueFd out;
};

struct Head : EntryReader::Visitor {
    Status on_terminal(std::string_view bytes) override
    {
        terminal.append(bytes);
        return {};
    }
    Status on_provenance(std::string_view doc) override
    {
        provenance = doc;
        return {};
    }
    std::string terminal, provenance;
};

}  // namespace

Result<CacheHit> read_head(int fd, const Hash128& hash)
{
    Head head;
    EntryReader reader(hash, {}, head);
    QK_TRY_STATUS(reader.read_fd(fd, true));
    CacheHit hit = reader.meta().hit;
    hit.terminal_output = std::move(head.terminal);
    hit.provenance = std::move(head.provenance);
    return hit;
}

Status check_whole(int fd, const CacheHit& hit)
{
    Matching matching(hit);
    EntryReader reader(hit.hash, {}, matching);
    return reader.read_fd(fd);
}

Status write_out(int fd, const CacheHit& hit, int root_fd)
{
    Writer writer(hit, root_fd);
    EntryReader reader(hit.hash, {}, writer);
    QK_TRY_STATUS(reader.read_fd(fd));
    return writer.upto(hit.files.size());
}

Status write_out(std::string_view archive, const CacheHit& hit, int root_fd)
{
    Writer writer(hit, root_fd);
    EntryReader reader(hit.hash, {}, writer);
    QK_TRY_STATUS(reader.write(archive));
    QK_TRY_STATUS(reader.finish());
    return writer.upto(hit.files.size());
}

Status send(int fd, const Hash128& hash, const ArchiveSink& sink)
{
    EntryReader::Visitor nothing_more;
    EntryReader reader(hash, {}, nothing_more);
    return reader.read_fd(fd, false, sink);
}

}  // namespace qk::key::packed
