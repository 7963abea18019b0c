// The entry archive: an entry exported from one workspace's cache and imported into another's restores
// the same outputs; an archive that is damaged, cut short, or lists paths the cache must not write is
// refused with a kind the caller branches on, and leaves no entry and no build directory behind.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "key/cache/cache_meta.hpp"
#include "key/cache/entry_archive.hpp"
#include "key/cache/entry_check.hpp"
#include "qk/util/link_target.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/unique_fd.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace qk::key;
using qk::ErrorKind;
using qk::Status;

namespace {

// A workspace in a temporary directory, with its cache.
struct Workspace {
    qk::test::TempDir tmp{"qk-archive"};
    fs::path root = tmp.path;
    LocalCache cache = qk::or_fatal(LocalCache::open(root));

    void write(const std::string& rel, const std::string& text, fs::perms mode = fs::perms(0644)) const
    {
        tmp.write(rel, text);
        fs::permissions(root / rel, mode);
    }
    // Nothing of an import is left: no entry for `hash`, nothing in the build directory.
    bool untouched(const Hash128& hash) const
    {
        return !fs::exists(fs::symlink_status(cache.dir() / hash.hex())) && fs::is_empty(cache.dir() / "tmp");
    }
};

CacheRecord record(std::vector<std::string> outputs, std::string provenance = {})
{
    return CacheRecord{"app:build", std::move(outputs), "built \x1b[32mok\x1b[0m\n", std::chrono::milliseconds(42),
                       "0.1.0-test", std::move(provenance)};
}

std::string export_to_string(const LocalCache& cache, const Hash128& hash)
{
    std::string out;
    Status s = cache.export_entry(hash, [&](std::string_view chunk) {
        out.append(chunk);
        return Status();
    });
    if (!s)
        FAIL(s.error().message);
    return out;
}

// Feeds `archive` to an import in pieces of `piece` bytes.
Status import_string(LocalCache& cache, const Hash128& hash, std::string_view archive, std::size_t piece = 7,
                     const ArchiveLimits& limits = {})
{
    EntryImport import = cache.begin_import(hash, limits);
    for (std::size_t at = 0; at < archive.size(); at += piece)
        if (Status s = import.write(archive.substr(at, piece)); !s)
            return s;
    return import.finish();
}

// An unnamed file in `dir` for an archive, gone when closed.
qk::UniqueFd scratch_file(const fs::path& dir)
{
    qk::UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    REQUIRE(fd.valid());
    return fd;
}

// A size in /proc/self/status, such as "VmHWM:" (the peak resident size since clear_refs was written).
long status_kib(std::string_view field)
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with(field))
            return std::stol(line.substr(field.size()));
    FAIL("no " << field << " in /proc/self/status");
    return -1;
}

// path -> "kind mode content-or-target" under `dir`.
std::map<std::string, std::string> snapshot(const fs::path& dir)
{
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
        struct stat st;
        REQUIRE(::lstat(it->path().c_str(), &st) == 0);
        std::string rel = fs::relative(it->path(), dir).string();
        if (S_ISLNK(st.st_mode)) {
            out[rel] = "link " + fs::read_symlink(it->path()).string();
        } else if (S_ISDIR(st.st_mode)) {
            out[rel] = "dir";
        } else {
            std::ifstream in(it->path(), std::ios::binary);
            out[rel] = "file " + std::to_string(st.st_mode & 07777) + " " +
                       std::string(std::istreambuf_iterator<char>(in), {});
        }
    }
    return out;
}

// An archive made by hand: meta.json written by the cache's own writer from `files` (whatever they
// hold), then `payload` as the files' bytes.
struct Hostile {
    Hash128 hash = hash_bytes("hostile");
    std::vector<std::string> outputs{"dist"};
    std::vector<CachedFile> files;
    std::string terminal = "t\n";
    std::string provenance;
    std::string payload;
    std::string magic = entry_archive::magic_line();

    std::string plain() const
    {
        std::string meta = qk::or_fatal(cache_meta::write(hash, record(outputs), files, terminal.size(), "now"));
        std::string out = magic;
        for (const std::string* part : {&std::as_const(meta), &terminal, &provenance})
            out += entry_archive::encode_length(part->size()) + *part;
        return out + payload;
    }
};

std::string gzip(std::string_view plain)
{
    std::string out;
    ArchiveSink sink = [&](std::string_view chunk) {
        out.append(chunk);
        return Status();
    };
    entry_archive::GzipWriter gz(sink);
    REQUIRE(gz.write(plain));
    REQUIRE(gz.finish());
    return out;
}

CachedFile file(std::string path, std::string_view content)
{
    return CachedFile{std::move(path), OutputFile::Kind::file, 0644, content.size(), {}, hash_bytes(content)};
}
CachedFile setuid_file(std::string path, std::string_view content)
{
    CachedFile f = file(std::move(path), content);
    f.mode = 04755;
    return f;
}
CachedFile symlink_entry(std::string path, std::string target)
{
    auto size = target.size();
    return CachedFile{std::move(path), OutputFile::Kind::symlink, 0, size, std::move(target), {}};
}

void expect_refused(Workspace& ws, const Hash128& hash, std::string_view archive, ErrorKind kind,
                    const std::string& says, const ArchiveLimits& limits = {})
{
    Status s = import_string(ws.cache, hash, archive, 5, limits);
    REQUIRE_FALSE(s);
    INFO(s.error().message);
    CHECK(s.error().kind == kind);
    CHECK(s.error().message.find(says) != std::string::npos);
    CHECK(ws.untouched(hash));
}

// A restore of `hit` refused for its archive at `packed`, damaged on disk: the entry removed, the
// workspace's dist/a.txt as it was.
void expect_restore_refused(const Workspace& ws, const CacheHit& hit, const fs::path& packed)
{
    Status s = ws.cache.restore(hit);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("so the entry was removed") != std::string::npos);
    CHECK_FALSE(fs::exists(packed));
    std::ifstream kept(ws.root / "dist/a.txt");
    CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "the workspace's own\n");
}

}  // namespace

TEST_CASE("an exported entry imported elsewhere restores the same outputs, modes, links and provenance",
          "[key][cache][archive]")
{
    Workspace from;
    from.write("dist/main.js", "console.log(1)\n");
    from.write("dist/bin/run", "#!/bin/sh\n", fs::perms(0755));
    from.write("dist/deep/er/still/key.pem", std::string("\0\x01\xff secret", 10), fs::perms(0600));
    from.write("dist/empty.txt", "");
    fs::create_directories(from.root / "dist/nothing/here");
    fs::create_symlink("main.js", from.root / "dist/alias.js");
    fs::create_symlink("../main.js", from.root / "dist/bin/up.js");
    const Hash128 h = hash_bytes("key");
    const std::string provenance = R"({"sandbox": "enforce", "findings": []})";
    REQUIRE(from.cache.store(h, record({"dist"}, provenance)));
    CHECK(from.cache.find(h).value()->provenance == provenance);
    const std::string archive = export_to_string(from.cache, h);

    for (std::size_t piece : {std::size_t{1}, std::size_t{13}, archive.size()}) {
        Workspace to;
        REQUIRE(import_string(to.cache, h, archive, piece));
        // Kept as it came: one file, the archive itself, not a directory of copies.
        CHECK(fs::is_regular_file(fs::symlink_status(to.cache.dir() / h.hex())));
        auto hit = to.cache.find(h);
        REQUIRE(hit);
        REQUIRE(hit->has_value());
        CHECK((*hit)->provenance == provenance);
        CHECK((*hit)->terminal_output == record({}).terminal_output);
        CHECK((*hit)->files.size() == 7);  // empty directories are listed, their parents implied
        REQUIRE(to.cache.restore(**hit));
        CHECK(snapshot(to.root / "dist") == snapshot(from.root / "dist"));
        CHECK(fs::is_empty(to.cache.dir() / "tmp"));
    }
}

TEST_CASE("export and import go through file descriptors, and an existing entry is kept", "[key][cache][archive]")
{
    Workspace from, to;
    from.write("out/a.txt", "a");
    const Hash128 h = hash_bytes("fd");
    REQUIRE(from.cache.store(h, record({"out"})));
    qk::UniqueFd f = scratch_file(from.root);
    REQUIRE(from.cache.export_entry(h, f.get()));
    REQUIRE(::lseek(f.get(), 0, SEEK_SET) == 0);
    REQUIRE(to.cache.import_entry(h, f.get()));
    REQUIRE(to.cache.find(h)->has_value());
    CHECK(to.cache.find(h).value()->provenance.empty());

    // A second import of the same hash leaves the first entry as it was (and no build directory).
    struct stat before {}, after {};
    REQUIRE(::stat((to.cache.dir() / h.hex()).c_str(), &before) == 0);
    REQUIRE(::lseek(f.get(), 0, SEEK_SET) == 0);
    REQUIRE(to.cache.import_entry(h, f.get()));
    REQUIRE(::stat((to.cache.dir() / h.hex()).c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);
    CHECK(fs::is_empty(to.cache.dir() / "tmp"));
}

TEST_CASE("an entry that is missing or changed on disk is not exported", "[key][cache][archive]")
{
    Workspace ws;
    ws.write("out/a.txt", "original");
    const Hash128 h = hash_bytes("changed");
    Status missing = ws.cache.export_entry(h, [](std::string_view) { return Status(); });
    REQUIRE_FALSE(missing);
    CHECK(missing.error().sys_errno == ENOENT);

    REQUIRE(ws.cache.store(h, record({"out"})));
    ws.write(".qk/cache/" + h.hex() + "/files/out/a.txt", "tampered");  // the same size
    Status s = ws.cache.export_entry(h, [](std::string_view) { return Status(); });
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("changed since it was stored") != std::string::npos);
    CHECK_FALSE(ws.cache.find(h)->has_value());
}

TEST_CASE("store refuses provenance that is not a JSON object", "[key][cache][archive]")
{
    Workspace ws;
    ws.write("out/a.txt", "a");
    CHECK_FALSE(ws.cache.store(hash_bytes("p"), record({"out"}, "[1, 2]")));
    CHECK_FALSE(ws.cache.store(hash_bytes("p"), record({"out"}, "{\"a\": ")));
    CHECK(ws.untouched(hash_bytes("p")));
}

TEST_CASE("an archive listing paths the cache must not write is refused before anything is written",
          "[key][cache][archive]")
{
    struct Case {
        const char* what;
        std::vector<std::string> outputs;
        std::vector<CachedFile> files;
        const char* says;
    };
    const std::vector<Case> cases = {
        {"a '..' component", {"dist"}, {file("dist/../escape", "x")}, "not a plain relative path"},
        {"an absolute path", {"dist"}, {file("/etc/passwd", "x")}, "not a plain relative path"},
        {"an absolute output", {"/etc"}, {file("/etc/passwd", "x")}, "outputs are refused"},
        {"an empty component", {"dist"}, {file("dist//x", "x")}, "not a plain relative path"},
        {"a path outside the outputs", {"dist"}, {file("src/x", "x")}, "outputs do not name"},
        {"a path below a link", {"dist"}, {symlink_entry("dist/l", "sub"), file("dist/l/x", "x")},
         "lists as a symbolic link"},
        {"a path below a file", {"dist"}, {file("dist/f", ""), file("dist/f/x", "")}, "lists as a file"},
        {"a path listed twice", {"dist"}, {file("dist/a", "x"), file("dist/a", "x")}, "twice"},
        {"a setuid file", {"dist"}, {setuid_file("dist/su", "x")}, "sets an id or the sticky bit"},
        {"a link through a sibling link", {"dist"}, {symlink_entry("dist/a", ".."), symlink_entry("dist/b", "a/../x")},
         "out of its outputs"},
        {"a link out of its outputs", {"dist"}, {symlink_entry("dist/l", "../src/main.js")}, "out of its outputs"},
        {"a link climbing out", {"dist"}, {symlink_entry("dist/l", "../../etc/passwd")}, "outside the workspace"},
        {"an absolute link", {"dist"}, {symlink_entry("dist/l", "/etc/passwd")}, "outside the workspace"},
    };
    Workspace ws;
    for (const Case& c : cases) {
        INFO(c.what);
        Hostile a;
        a.outputs = c.outputs;
        a.files = c.files;
        for (const CachedFile& f : c.files)
            a.payload += f.kind == OutputFile::Kind::file && f.size ? "x" : "";
        expect_refused(ws, a.hash, gzip(a.plain()), ErrorKind::cache_entry_unsafe, c.says);
    }
}

TEST_CASE("a link target is inside the workspace by its text from the link's directory", "[key][cache][archive]")
{
    CHECK(qk::link_destination("dist/l", "main.js") == "dist/main.js");
    CHECK(qk::link_destination("dist/l", "../src/x") == "src/x");
    CHECK(qk::link_destination("dist/a/b/l", "../../.././x") == "x");
    CHECK(qk::link_destination("dist/l", ".") == "dist");
    CHECK(qk::link_destination("dist/l", "..") == "");
    // A ".." after a name climbs out of whatever the name is: "a" may itself be a link ("a" -> ".."),
    // of the entry or of the workspace, so the text alone cannot say it stays inside.
    CHECK_FALSE(qk::link_destination("dist/l", "a/../../x"));
    CHECK_FALSE(qk::link_destination("dist/b", "a/../x"));
    CHECK_FALSE(qk::link_destination("dist/l", "../../x"));
    CHECK_FALSE(qk::link_destination("dist/l", "a/../../../x"));
    CHECK_FALSE(qk::link_destination("l", ".."));
    CHECK_FALSE(qk::link_destination("dist/l", "/x"));
    CHECK_FALSE(qk::link_destination("dist/l", ""));
    CHECK_FALSE(qk::link_destination("dist/l", std::string("a\0b", 3)));
}

TEST_CASE("an entry's link must lead within its outputs' roots, the same rule local and remote", "[key][cache][archive]")
{
    auto outputs = OutputSet::compile(std::vector<std::string>{"dist", "types/**/*.d.ts"});
    REQUIRE(outputs);
    CHECK_FALSE(entry_check::link_refused(*outputs, "dist/l", "main.js"));
    CHECK_FALSE(entry_check::link_refused(*outputs, "dist/l", "../types/a.d.ts"));
    CHECK_FALSE(entry_check::link_refused(*outputs, "dist/l", "."));
    CHECK_THAT(entry_check::link_refused(*outputs, "dist/l", "../src").value_or(""), Catch::Contains("out of its outputs"));
    CHECK_THAT(entry_check::link_refused(*outputs, "dist", "dist2").value_or(""), Catch::Contains("out of its outputs"));
    CHECK_THAT(entry_check::link_refused(*outputs, "dist/l", "..").value_or(""),
               Catch::Contains("out of its outputs (the workspace root)"));
    CHECK_THAT(entry_check::link_refused(*outputs, "dist/l", "/etc").value_or(""),
               Catch::Contains("outside the workspace"));
}

TEST_CASE("an archive whose bytes are damaged, cut short or for another entry is refused and leaves nothing",
          "[key][cache][archive]")
{
    Workspace from;
    from.write("dist/a.txt", "alpha alpha alpha\n");
    from.write("dist/sub/b.bin", std::string(3000, 'b') + "tail");
    from.write("dist/sub/empty", "");
    const Hash128 h = hash_bytes("damaged");
    REQUIRE(from.cache.store(h, record({"dist"}, R"({"mode": "audit"})")));
    const std::string archive = export_to_string(from.cache, h);
    Workspace to;

    SECTION("cut at every length short of the whole")
    {
        for (std::size_t cut = 0; cut < archive.size(); ++cut) {
            INFO("cut at " << cut << " of " << archive.size());
            Status s = import_string(to.cache, h, std::string_view(archive).substr(0, cut), 64);
            REQUIRE_FALSE(s);
            CHECK(s.error().kind == ErrorKind::cache_entry_corrupt);
            REQUIRE(to.untouched(h));
        }
        REQUIRE(import_string(to.cache, h, archive));
    }
    SECTION("trailing bytes after the gzip stream, or inside it after the last file")
    {
        expect_refused(to, h, archive + "x", ErrorKind::cache_entry_corrupt, "follow the end of the gzip stream");
        expect_refused(to, h, archive + gzip("again"), ErrorKind::cache_entry_corrupt, "follow the end");
        Hostile a;
        a.files = {file("dist/a", "abc")};
        a.payload = "abcd";
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_corrupt, "follow the last file");
    }
    SECTION("a file whose bytes do not match its hash")
    {
        Hostile a;
        a.files = {file("dist/a", "abc"), file("dist/b", "hello")};
        a.payload = "abchellp";
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_corrupt, "do not match its hash");
        a.payload = "abchello";
        REQUIRE(import_string(to.cache, a.hash, gzip(a.plain())));  // the same archive, undamaged
    }
    SECTION("a corrupt gzip stream")
    {
        expect_refused(to, h, "not gzip at all", ErrorKind::cache_entry_corrupt, "gzip stream is corrupt");
        for (std::size_t at = 10; at < archive.size(); at += archive.size() / 16) {
            std::string damaged = archive;
            damaged[at] = static_cast<char>(damaged[at] ^ 0x55);
            INFO("byte " << at << " flipped");
            expect_refused(to, h, damaged, ErrorKind::cache_entry_corrupt, "");
        }
    }
    SECTION("a wrong magic line, or another format version")
    {
        Hostile a;
        a.magic = "qk-cache-entry 99\n";
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_version, "this qk reads version 1");
        a.magic = "PK\x03\x04";
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_corrupt, "magic line");
        expect_refused(to, a.hash, gzip(std::string(500, 'q')), ErrorKind::cache_entry_corrupt, "magic line");
    }
    SECTION("meta.json for another hash")
    {
        expect_refused(to, hash_bytes("another"), archive, ErrorKind::cache_entry_corrupt, "is for hash");
    }
    SECTION("sizes over the limits, a terminal size other than meta.json's, provenance not an object")
    {
        expect_refused(to, h, gzip(entry_archive::magic_line() + entry_archive::encode_length(1ULL << 40)),
                       ErrorKind::cache_entry_corrupt, "over the limit");
        ArchiveLimits small;
        small.file_bytes = 100;
        expect_refused(to, h, archive, ErrorKind::cache_entry_corrupt, "more than the limit of 100", small);
        Hostile a;
        a.files = {CachedFile{"dist/huge", OutputFile::Kind::file, 0644, 1ULL << 52, {}, {}},
                   CachedFile{"dist/huge2", OutputFile::Kind::file, 0644, 1ULL << 52, {}, {}}};
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_corrupt, "more than the limit");
        a.files = {};
        std::string plain = a.plain();
        std::size_t at = plain.find(entry_archive::encode_length(a.terminal.size()) + a.terminal);
        REQUIRE(at != std::string::npos);
        plain[at] = 9;
        expect_refused(to, a.hash, gzip(plain), ErrorKind::cache_entry_corrupt, "meta.json says 2");
        a.provenance = "[\"not an object\"]";
        expect_refused(to, a.hash, gzip(a.plain()), ErrorKind::cache_entry_corrupt, "should hold an object");
    }
}

TEST_CASE("a 64 MiB output goes through export and import in bounded memory", "[key][cache][archive]")
{
    Workspace from, to;
    fs::create_directories(from.root / "dist");
    {
        // Pseudo-random, so that it does not compress to nothing, written a MiB at a time.
        std::ofstream out(from.root / "dist/big.bin", std::ios::binary);
        std::string mib(std::size_t{1} << 20, '\0');
        std::uint64_t x = 88172645463325252ULL;
        for (int m = 0; m < 64; ++m) {
            for (char& c : mib) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                c = static_cast<char>(x & 0x0f);
            }
            out.write(mib.data(), static_cast<std::streamsize>(mib.size()));
        }
    }
    const Hash128 h = hash_bytes("big");
    REQUIRE(from.cache.store(h, record({"dist"})));

    if (!(std::ofstream("/proc/self/clear_refs") << "5"))
        return qk::test::skip("cannot reset the peak resident size (/proc/self/clear_refs)");
    const long before = status_kib("VmRSS:");
    qk::UniqueFd f = scratch_file(from.root);
    REQUIRE(from.cache.export_entry(h, f.get()));
    REQUIRE(::lseek(f.get(), 0, SEEK_SET) == 0);
    REQUIRE(to.cache.import_entry(h, f.get()));
    const long grown = status_kib("VmHWM:") - before;
    INFO("peak resident size grew by " << grown << " KiB");
    CHECK(grown < 8L * 1024);
    auto hit = to.cache.find(h);
    REQUIRE(hit->has_value());
    REQUIRE((*hit)->files.size() == 1);
    CHECK((*hit)->files[0].size == std::uint64_t{64} << 20);
}

TEST_CASE("an archive that would leave the disk nearly full is refused before anything is written",
          "[key][cache][archive]")
{
    // meta.json says a file as large as what the file system has free: no byte of it need be sent.
    Workspace ws;
    struct statvfs fs {};
    REQUIRE(::statvfs(ws.cache.dir().c_str(), &fs) == 0);
    const std::uint64_t avail = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    Hostile a;
    CachedFile big = file("dist/big", "x");
    big.size = avail;
    a.files = {big};
    ArchiveLimits unlimited;
    unlimited.file_bytes = std::numeric_limits<std::uint64_t>::max();
    Status s = import_string(ws.cache, a.hash, gzip(a.plain()), 5, unlimited);
    REQUIRE_FALSE(s);
    INFO(s.error().message);
    CHECK(s.error().sys_errno == ENOSPC);
    CHECK_THAT(s.error().message, Catch::Contains("kept free: the entry is not written"));
    CHECK(ws.untouched(a.hash));
}

TEST_CASE("an archive its reader refuses, judged on its provenance before it is put in place, leaves nothing",
          "[key][cache][archive]")
{
    Workspace from, to;
    from.write("out/a.txt", "a");
    const Hash128 h = hash_bytes("judged");
    auto rec = record({"out"});
    rec.provenance = R"({"status": "audited"})";
    REQUIRE(from.cache.store(h, rec));
    const std::string archive = export_to_string(from.cache, h);
    std::string seen;
    EntryImport refused = to.cache.begin_import(h);
    REQUIRE(refused.write(archive));
    Status s = refused.finish([&](std::string_view provenance) {
        seen = provenance;
        return Status(qk::error("not verified"));
    });
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::EndsWith(": not verified"));
    CHECK(seen == R"({"status": "audited"})");
    CHECK_FALSE(to.cache.find(h)->has_value());
    CHECK(fs::is_empty(to.cache.dir() / "tmp"));
    EntryImport accepted = to.cache.begin_import(h);
    REQUIRE(accepted.write(archive));
    REQUIRE(accepted.finish([](std::string_view) { return Status(); }));
    CHECK(to.cache.find(h)->has_value());
}

TEST_CASE("a packed entry damaged on disk is refused before the workspace is touched, and removed",
          "[key][cache][archive]")
{
    Workspace from;
    // Over one read's worth of compressed bytes: find() reads only the head, restore reads it all.
    std::string noise;
    std::uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 300000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise.push_back(static_cast<char>(x));
    }
    from.write("dist/a.txt", "alpha\n");
    from.write("dist/z.bin", noise);
    const Hash128 h = hash_bytes("packed damage");
    REQUIRE(from.cache.store(h, record({"dist"})));
    const std::string archive = export_to_string(from.cache, h);
    REQUIRE(archive.size() > 2 * entry_archive::chunk_size);

    Workspace to;
    to.write("dist/a.txt", "the workspace's own\n");
    REQUIRE(import_string(to.cache, h, archive, 4096));
    const fs::path packed = to.cache.dir() / h.hex();
    auto hit = to.cache.find(h);
    REQUIRE(hit);
    REQUIRE(hit->has_value());

    SECTION("a restore")
    {
        {
            std::fstream f(packed, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(archive.size() - 1000));
            f.put(static_cast<char>(archive[archive.size() - 1000] ^ 0x5a));
        }
        expect_restore_refused(to, **hit, packed);
    }
    SECTION("an export")
    {
        {
            std::fstream f(packed, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(archive.size() - 1000));
            f.put(static_cast<char>(archive[archive.size() - 1000] ^ 0x5a));
        }
        Status s = to.cache.export_entry(h, [](std::string_view) { return Status(); });
        REQUIRE_FALSE(s);
        CHECK(s.error().kind == ErrorKind::cache_entry_corrupt);
        CHECK_FALSE(fs::exists(packed));
    }
    SECTION("undamaged, it restores and exports the same bytes it was imported from")
    {
        REQUIRE(to.cache.restore(**hit));
        CHECK(snapshot(to.root / "dist") == snapshot(from.root / "dist"));
        CHECK(export_to_string(to.cache, h) == archive);
        // A store under the same hash keeps the packed entry, as it keeps any entry there.
        REQUIRE(to.cache.store(h, record({"dist"})));
        CHECK(fs::is_regular_file(packed));
    }
}

TEST_CASE("an entry imported here restores from the bytes its import checked, not from a file put in its place",
          "[key][cache][archive]")
{
    Workspace from;
    from.write("dist/a.txt", "alpha\n");
    from.write("dist/sub/b.txt", "beta\n", fs::perms(0755));
    const Hash128 h = hash_bytes("fresh import");
    REQUIRE(from.cache.store(h, record({"dist"}, R"({"mode": "audit"})")));
    const std::string archive = export_to_string(from.cache, h);

    Workspace to;
    REQUIRE(import_string(to.cache, h, archive));
    // Linked in from an unnamed file: nothing was named in the build directory, even for a moment.
    CHECK(fs::is_empty(to.cache.dir() / "tmp"));
    const fs::path packed = to.cache.dir() / h.hex();
    REQUIRE(fs::is_regular_file(packed));
    auto hit = to.cache.find(h);
    REQUIRE(hit);
    REQUIRE(hit->has_value());
    CHECK((*hit)->terminal_output == "built \x1b[32mok\x1b[0m\n");
    CHECK((*hit)->provenance == R"({"mode": "audit"})");

    SECTION("the file it put there: restored, and again once the kept bytes are taken")
    {
        REQUIRE(to.cache.restore(**hit));
        CHECK(snapshot(to.root / "dist") == snapshot(from.root / "dist"));
        fs::remove_all(to.root / "dist");
        REQUIRE(to.cache.restore(**hit));
        CHECK(snapshot(to.root / "dist") == snapshot(from.root / "dist"));
    }
    SECTION("a damaged file put in its place since: read from the disk, refused before the workspace is "
            "touched, and removed")
    {
        to.write("dist/a.txt", "the workspace's own\n");
        std::string damaged = archive;
        damaged[damaged.size() - 12] = static_cast<char>(damaged[damaged.size() - 12] ^ 0x5a);
        to.write(".qk/cache/tmp/replacement", damaged);
        fs::rename(to.cache.dir() / "tmp/replacement", packed);
        expect_restore_refused(to, **hit, packed);
    }
    SECTION("removed: a miss, and imported again a hit")
    {
        to.cache.remove(h);
        CHECK_FALSE(to.cache.find(h)->has_value());
        REQUIRE(import_string(to.cache, h, archive, 4096));
        auto again = to.cache.find(h);
        REQUIRE(again);
        REQUIRE(again->has_value());
        REQUIRE(to.cache.restore(**again));
        CHECK(snapshot(to.root / "dist") == snapshot(from.root / "dist"));
    }
}
