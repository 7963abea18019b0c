// Records built by hand in the wire layout of bpf/events.h, decoded as the consumer does; the load error's
// kernel hint.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "events.h"
#include "record/ebpf_decode.hpp"
#include "record/ebpf_session.hpp"

using namespace qk::record;

namespace {

template <class Event>
std::vector<char> record(Event ev, std::initializer_list<std::string_view> pieces)
{
    ev.h.abi = QK_ABI_VERSION;
    ev.h.cgroup_id = 77;
    ev.h.pid = 42;
    ev.p.count = 0;
    ev.p.used = 0;
    for (auto piece : pieces) {
        ev.p.len[ev.p.count++] = static_cast<qk_u16>(piece.size());
        std::memcpy(ev.p.data + ev.p.used, piece.data(), piece.size());
        ev.p.used += piece.size();
    }
    std::size_t size = offsetof(Event, p.data) + ev.p.used;
    ev.h.size = size;
    std::vector<char> bytes(size);
    std::memcpy(bytes.data(), &ev, size);
    return bytes;
}

}  // namespace

TEST_CASE("an open record decodes to the kernel's path, the spelled path and its flags", "[record][ebpf]")
{
    static qk_file_event ev{};
    ev.h.kind = QK_EV_FILE;
    ev.op = QK_OP_OPEN;
    ev.ret = 3;
    ev.flags = O_WRONLY | O_CREAT;
    ev.info = QK_INFO_CREATED;
    auto bytes = record(ev, {"/real/out.txt", "/w", "link/out.txt"});
    auto rec = decode_ebpf_record(bytes.data(), bytes.size());
    REQUIRE(rec);
    CHECK(rec->cgroup_id == 77);
    const auto& op = std::get<FsOp>(rec->event);
    CHECK(op.kind == FsOpKind::open);
    CHECK(op.pid == 42);
    CHECK(op.result == 3);
    CHECK(op.resolved == "/real/out.txt");
    CHECK(op.a.base == "/w");
    CHECK(op.a.name == "link/out.txt");
    CHECK(op.created);
    CHECK(op.created_known);
    CHECK_FALSE(op.directory);
}

TEST_CASE("refused open and exec records become denials when the sink keeps them", "[record][ebpf]")
{
    // As the programs send them for a task with QK_TASK_DENIALS: a failed OPEN has an empty first piece.
    static qk_file_event open_ev{};
    open_ev.h.kind = QK_EV_FILE;
    open_ev.op = QK_OP_OPEN;
    open_ev.ret = -EACCES;
    open_ev.flags = O_RDONLY;
    auto open_bytes = record(open_ev, {"", "/qkt/w", "secret"});
    static qk_file_event exec_ev{};
    exec_ev.h.kind = QK_EV_FILE;
    exec_ev.op = QK_OP_EXEC;
    exec_ev.ret = -EPERM;
    auto exec_bytes = record(exec_ev, {"", "/qkt/bin/tool"});

    auto open_rec = decode_ebpf_record(open_bytes.data(), open_bytes.size());
    auto exec_rec = decode_ebpf_record(exec_bytes.data(), exec_bytes.size());
    REQUIRE(open_rec);
    REQUIRE(exec_rec);
    const auto& op = std::get<FsOp>(open_rec->event);
    CHECK(op.kind == FsOpKind::open);
    CHECK(op.result == -EACCES);
    CHECK(op.resolved.empty());
    CHECK(op.a.base == "/qkt/w");
    CHECK(op.a.name == "secret");
    CHECK(std::get<FsOp>(exec_rec->event).kind == FsOpKind::exec);
    CHECK(std::get<FsOp>(exec_rec->event).result == -EPERM);

    for (bool denials : {true, false}) {
        Recording out;
        RecordingSink sink(out);
        if (denials)
            sink.keep_denials();
        deliver(*open_rec, sink);
        deliver(*exec_rec, sink);
        CHECK(out.paths().size() == (denials ? 2u : 0u));
        if (denials) {
            CHECK(out.paths().at("/qkt/w/secret") == kDenied);
            CHECK(out.paths().at("/qkt/bin/tool") == kDenied);
        }
    }
}

TEST_CASE("rename and exec records", "[record][ebpf]")
{
    static qk_file_event ren{};
    ren.h.kind = QK_EV_FILE;
    ren.op = QK_OP_RENAME;
    ren.p.truncated = 1 << 3;
    auto bytes = record(ren, {"/w", "a", "", "/abs/b"});
    auto rec = decode_ebpf_record(bytes.data(), bytes.size());
    REQUIRE(rec);
    const auto& op = std::get<FsOp>(rec->event);
    CHECK(op.kind == FsOpKind::rename);
    CHECK(op.a.name == "a");
    CHECK(op.b.name == "/abs/b");
    CHECK(op.b.truncated);
    CHECK_FALSE(op.a.truncated);

    static qk_exec_event exec{};
    exec.h.kind = QK_EV_EXEC;
    exec.ppid = 41;
    exec.info = QK_INFO_ELF32;
    using namespace std::string_view_literals;
    bytes = record(exec, {"./tool", "/w", "tool\0-x\0"sv, "/usr/bin/tool"});
    rec = decode_ebpf_record(bytes.data(), bytes.size());
    REQUIRE(rec);
    const auto& e = std::get<ProcExec>(rec->event);
    CHECK(e.ppid == 41);
    CHECK(e.file.base == "/w");
    CHECK(e.file.name == "./tool");
    CHECK(e.argv == std::vector<std::string>{"tool", "-x"});
    CHECK(e.elf32);

    bytes = record(exec, {"/dev/fd/3", "/w", "x\0"sv, "/real/prog"});
    rec = decode_ebpf_record(bytes.data(), bytes.size());
    REQUIRE(rec);
    CHECK(std::get<ProcExec>(rec->event).resolved == "/real/prog");
}

TEST_CASE("malformed records are errors, not crashes", "[record][ebpf]")
{
    char tiny[8] = {};
    CHECK_FALSE(decode_ebpf_record(tiny, sizeof(tiny)));

    static qk_file_event ev{};
    ev.h.kind = QK_EV_FILE;
    ev.op = QK_OP_OPEN;
    auto bytes = record(ev, {"/a", "", "/a"});
    bytes.resize(bytes.size() - 2);  // the pieces overrun the record
    CHECK_FALSE(decode_ebpf_record(bytes.data(), bytes.size()));

    bytes = record(ev, {"/a", "", "/a"});
    reinterpret_cast<qk_event_header*>(bytes.data())->abi = QK_ABI_VERSION + 1;
    auto wrong_abi = decode_ebpf_record(bytes.data(), bytes.size());
    REQUIRE_FALSE(wrong_abi);
    CHECK_THAT(wrong_abi.error().message, Catch::Contains("ABI"));

    reinterpret_cast<qk_event_header*>(bytes.data())->abi = QK_ABI_VERSION;
    reinterpret_cast<qk_event_header*>(bytes.data())->kind = 99;
    CHECK_FALSE(decode_ebpf_record(bytes.data(), bytes.size()));

    ev.op = 250;
    bytes = record(ev, {"/a", "", "/a"});
    CHECK_FALSE(decode_ebpf_record(bytes.data(), bytes.size()));
}

TEST_CASE("a kernel too old for the recorder is named in the load error", "[record][ebpf]")
{
    using qk::record::ebpf_kernel_hint;
    CHECK(ebpf_kernel_hint("6.18.44-fc-v1045").empty());
    CHECK(ebpf_kernel_hint("5.17.0").empty());
    CHECK(ebpf_kernel_hint("10.1").empty());
    CHECK(ebpf_kernel_hint("garbage").empty());  // unknown: say nothing rather than guess
    CHECK(ebpf_kernel_hint("4294967301.1").empty());  // too big to be a version: not wrapped around to 5.1
    auto hint = ebpf_kernel_hint("5.15.0-91-generic");
    CHECK(hint.find("this kernel is 5.15") != std::string::npos);
    CHECK(hint.find("--recorder strace") != std::string::npos);
    CHECK(!ebpf_kernel_hint("4.19.0").empty());
}

TEST_CASE("records of an open by handle, a mknod and a remapping call", "[record][ebpf]")
{
    static qk_file_event ev{};
    ev.h.kind = QK_EV_FILE;
    Recording out;
    RecordingSink sink(out);

    ev.op = QK_OP_OPEN_HANDLE;  // no name was passed: only the returned fd's path
    ev.ret = 4;
    ev.flags = O_RDONLY;
    auto handle = record(ev, {"/w/handle.txt"});
    auto rec = decode_ebpf_record(handle.data(), handle.size());
    REQUIRE(rec);
    CHECK(std::get<FsOp>(rec->event).resolved == "/w/handle.txt");
    deliver(*rec, sink);

    ev.op = QK_OP_MKNOD;
    ev.ret = 0;
    ev.flags = 0100644;  // S_IFREG | 0644
    auto mknod = record(ev, {"/w", "made"});
    rec = decode_ebpf_record(mknod.data(), mknod.size());
    REQUIRE(rec);
    CHECK(std::get<FsOp>(rec->event).kind == FsOpKind::mknod);
    deliver(*rec, sink);
    CHECK(out.complete());

    ev.op = QK_OP_REMAP;
    ev.flags = 165;  // mount
    auto remap = record(ev, {});
    rec = decode_ebpf_record(remap.data(), remap.size());
    REQUIRE(rec);
    deliver(*rec, sink);

    CHECK((out.paths().at("/w/handle.txt") & kRead));
    CHECK((out.paths().at("/w/made") & kCreate));
    REQUIRE(out.incomplete_reasons().size() == 1);
    CHECK(out.incomplete_reasons()[0].find("process 42 called mount") != std::string::npos);
}
