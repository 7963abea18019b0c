// Reading a --sandbox-report back. simdjson for speed (a merge reads 50 shards of 1,000 tasks); a
// document it refuses is read again by the configuration reader, whose error says line and column.
#include "qk/report/report_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <simdjson.h>

#include "qk/report/sandbox_report.hpp"
#include "qk/util/io.hpp"
#include "qk/util/special_names.hpp"
#include "qk/workspace/json.hpp"

namespace qk::report {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Valid empty values (an object, an array, null) that a Reader goes on with where it found no value of
// the type it expected, so that nothing after a mistake needs a check of its own.
class Blank {
public:
    static const Blank& get()
    {
        static const Blank blank;
        return blank;
    }
    element null;
    object empty_object;
    simdjson::dom::array empty_array;

private:
    Blank()
    {
        element doc;
        // A constant the parser reads: it cannot fail, and if it ever did, blanks would be garbage.
        if (parser_.parse(simdjson::padded_string(std::string_view(R"({"o":{},"a":[],"n":null})"))).get(doc) ||
            doc["o"].get(empty_object) || doc["a"].get(empty_array) || doc["n"].get(null))
            std::abort();
    }
    simdjson::dom::parser parser_;
};

// The reader is a deep descent where every step can fail, and a Result at each would bury what it reads:
// the first field that breaks the schema is kept as failure(), which read_padded returns; the tasks'
// loops stop there, and a step still under way goes on with blanks and adds no mistake of its own.
class Reader {
public:
    explicit Reader(const std::string& name) : name_(name) {}

    const std::optional<Error>& failure() const { return failure_; }

    audit::RunAudit document(element doc)
    {
        object top = as_object(doc, "");
        version(top);
        audit::RunAudit out;
        run(field(top, "run", ""), out.run);
        out.mode = string(field(top, "mode", ""), "mode");
        if (out.mode != "audit" && out.mode != "enforce")
            fail("mode", "expected audit or enforce, got \"" + out.mode + "\"");
        if (auto r = optional_string(field(top, "recorder", ""), "recorder"))
            out.recorder = *r;
        out.no_recorder = optional_field_string(top, "recorderUnavailable");
        out.recorder_fallback = optional_field_string(top, "recorderFallback");
        out.landlock_only = optional_field_string(top, "landlockOnly");
        if (element abi; top["landlockAbi"].get(abi) == simdjson::SUCCESS)
            out.landlock_abi = static_cast<int>(integer(abi, "landlockAbi"));
        tasks(top, out.tasks, out.conflicts, &Reader::task);
        out.finish();  // the counts and run-wide views, from the tasks, as when it was written
        return out;
    }

    RunReport run_document(element doc)
    {
        object top = as_object(doc, "");
        version(top);
        RunReport out;
        run(field(top, "run", ""), out.run);
        tasks(top, out.tasks, out.conflicts, &Reader::task_run);
        return out;
    }

private:
    // "tasks", and "conflicts" when there are any, each record read by `read`.
    template <class T>
    void tasks(object top, std::vector<T>& out, std::map<std::string, std::vector<T>>& conflicts,
               T (Reader::*read)(std::string, element, const std::string&) const) const
    {
        object all = as_object(field(top, "tasks", ""), "tasks");
        out.reserve(all.size());
        for (auto [id, value] : all) {
            if (failure_)
                return;
            std::string where = fmt::format("tasks/{}", std::string_view(id));
            task_id(id, where);
            out.push_back((this->*read)(std::string(id), value, where));
        }
        element disputed;
        if (top["conflicts"].get(disputed) != simdjson::SUCCESS)
            return;
        for (auto [id, records] : as_object(disputed, "conflicts")) {
            std::string where = fmt::format("conflicts/{}", std::string_view(id));
            task_id(id, where);
            auto& list = conflicts[std::string(id)];
            std::size_t i = 0;
            for (element r : as_array(records, where))
                if (!failure_)
                    list.push_back((this->*read)(std::string(id), r, fmt::format("{}/{}", where, i++)));
        }
    }

    // "project:target", as the writer keys tasks: a merge must not write what the schema refuses.
    void task_id(std::string_view id, std::string_view where) const
    {
        const auto colon = id.find(':');
        if (colon == 0 || colon == std::string_view::npos || colon + 1 == id.size())
            fail(where, "a task's id is project:target");
    }

    void version(object top) const
    {
        auto v = field(top, "schemaVersion", "");
        if (!v.is_int64() || v.get_int64().value() != 1)
            fail("schemaVersion", "this qk reads schemaVersion 1 reports; this one was written by another version");
    }

    TaskRun task_run(std::string id, element e, const std::string& where) const
    {
        object o = as_object(e, where);
        TaskRun t;
        t.task = std::move(id);
        std::string status = string(field(o, "status", where), where + "/status");
        if (auto known = parse_run_status(status))
            t.status = *known;
        else
            fail(where + "/status", "expected one of " + run_status_names() + "; got \"" + status + "\"");
        t.hash = optional_field_string(o, "hash");
        if (std::string source = optional_field_string(o, "source"); !source.empty()) {
            if (auto known = parse_result_source(source))
                t.source = *known;
            else
                fail(where + "/source", "expected one of ran, restored, restoredInPlace, restoredRemote; got \"" + source + "\"");
        }
        t.ran_because = optional_field_string(o, "ranBecause");
        t.duration_ms = integer(field(o, "durationMs", where), where + "/durationMs");
        t.provenance = std::make_shared<const audit::Provenance>(
            provenance(field(o, "provenance", where), where + "/provenance"));
        if (element f; o["audit"].get(f) == simdjson::SUCCESS) {
            auto read = std::make_shared<audit::TaskFindings>();
            findings(f, where + "/audit", *read);
            t.audit = std::move(read);
        }
        return t;
    }

    const std::string& name_;
    mutable std::optional<Error> failure_;  // mutable: reading is const, and meets a mistake as it reads

    // Keeps the first mistake: later ones follow from it.
    void fail(std::string_view where, std::string_view what) const
    {
        if (!failure_)
            failure_ = error(fmt::format("{}: {}: {}", name_, where.empty() ? "the document" : where, what));
    }
    object as_object(element e, std::string_view where) const
    {
        object o;
        if (e.get(o) != simdjson::SUCCESS) {
            fail(where, "expected an object");
            return Blank::get().empty_object;
        }
        return o;
    }
    simdjson::dom::array as_array(element e, std::string_view where) const
    {
        simdjson::dom::array a;
        if (e.get(a) != simdjson::SUCCESS) {
            fail(where, "expected an array");
            return Blank::get().empty_array;
        }
        return a;
    }
    element field(object o, std::string_view key, std::string_view where) const
    {
        element e;
        if (o[key].get(e) != simdjson::SUCCESS) {
            fail(where.empty() ? key : fmt::format("{}/{}", where, key), "missing");
            return Blank::get().null;
        }
        return e;
    }
    std::string string(element e, std::string_view where) const
    {
        std::string_view s;
        if (e.get(s) != simdjson::SUCCESS)
            fail(where, "expected a string");
        return std::string(s);
    }
    std::optional<std::string> optional_string(element e, std::string_view where) const
    {
        if (e.is_null())
            return std::nullopt;
        return string(e, where);
    }
    std::string optional_field_string(object o, std::string_view key) const
    {
        element e;
        if (o[key].get(e) != simdjson::SUCCESS)
            return {};
        return string(e, key);
    }
    std::int64_t integer(element e, std::string_view where) const
    {
        std::int64_t n = 0;
        if (e.get(n) != simdjson::SUCCESS || n < 0)
            fail(where, "expected a count (an integer of at least 0)");
        return n;
    }
    std::vector<std::string> strings(element e, std::string_view where) const
    {
        std::vector<std::string> out;
        std::size_t i = 0;
        for (element s : as_array(e, where))
            out.push_back(string(s, fmt::format("{}/{}", where, i++)));
        return out;
    }

    std::vector<audit::TaskFindings::Connection> connections(element e, const std::string& where) const
    {
        std::vector<audit::TaskFindings::Connection> out;
        std::size_t i = 0;
        for (element item : as_array(e, where)) {
            const std::string at = fmt::format("{}/{}", where, i++);
            object c = as_object(item, at);
            audit::TaskFindings::Connection one;
            one.reached = string(field(c, "entry", at), at + "/entry");
            one.address = string(field(c, "address", at), at + "/address");
            const std::int64_t port = integer(field(c, "port", at), at + "/port");
            if (port > 65535)
                fail(at + "/port", "expected a port from 0 to 65535");
            one.port = static_cast<std::uint16_t>(port);
            const std::string protocol = string(field(c, "protocol", at), at + "/protocol");
            if (protocol != "tcp" && protocol != "udp")
                fail(at + "/protocol", "expected \"tcp\" or \"udp\"; got \"" + protocol + "\"");
            one.datagram = protocol == "udp";
            one.host = optional_field_string(c, "host");
            one.count = static_cast<std::uint32_t>(std::min<std::int64_t>(integer(field(c, "count", at), at + "/count"),
                                                                           UINT32_MAX));
            if (field(c, "reached", at).get(one.answered) != simdjson::SUCCESS)
                fail(at + "/reached", "expected true or false");
            out.push_back(std::move(one));
        }
        return out;
    }

    void run(element e, audit::RunIdentity& run) const
    {
        object o = as_object(e, "run");
        run.id = string(field(o, "id", "run"), "run/id");
        if (run.id.empty())
            fail("run/id", "empty");
        run.id_from = string(field(o, "idFrom", "run"), "run/idFrom");
        run.commit = optional_string(field(o, "commit", "run"), "run/commit");
        std::size_t i = 0;
        for (element s : as_array(field(o, "shards", "run"), "run/shards"))
            run.shards.push_back(optional_string(s, fmt::format("run/shards/{}", i++)));
        if (run.shards.empty())
            fail("run/shards", "empty: a report holds the tasks of at least one shard");
    }

    audit::Provenance provenance(element e, const std::string& where) const
    {
        object o = as_object(e, where);
        audit::Provenance p;
        p.shard = optional_string(field(o, "shard", where), where + "/shard");
        p.host = string(field(o, "host", where), where + "/host");
        p.kernel = string(field(o, "kernel", where), where + "/kernel");
        p.recorder = optional_string(field(o, "recorder", where), where + "/recorder");
        if (element abi = field(o, "landlockAbi", where); !abi.is_null())
            p.landlock_abi = static_cast<int>(integer(abi, where + "/landlockAbi"));
        if (element overlay = field(o, "overlay", where); !overlay.is_null()) {
            bool b = false;
            if (overlay.get(b) != simdjson::SUCCESS)
                fail(where + "/overlay", "expected true, false or null");
            p.overlay = b;
        }
        p.lost_events = static_cast<std::uint64_t>(integer(field(o, "lostEvents", where), where + "/lostEvents"));
        return p;
    }

    audit::TaskAudit task(std::string id, element e, const std::string& where) const
    {
        object o = as_object(e, where);
        audit::TaskAudit t;
        t.task = std::move(id);
        std::string status = string(field(o, "status", where), where + "/status");
        auto known = audit::parse_status(status);
        if (known)
            t.status = *known;
        else
            fail(where + "/status", "expected one of audited, restored, notAudited, unsandboxed, refused, enforced; "
                                    "got \"" + status + "\"");
        t.project = optional_field_string(o, "project");
        t.reason = optional_field_string(o, "reason");
        t.hash = optional_field_string(o, "hash");
        t.provenance = provenance(field(o, "provenance", where), where + "/provenance");
        if (element remote; o["fromRemoteCache"].get(remote) == simdjson::SUCCESS) {
            bool b = false;
            if (remote.get(b) != simdjson::SUCCESS)
                fail(where + "/fromRemoteCache", "expected true or false");
            t.from_remote_cache = b;
        }
        if (element f; o["findings"].get(f) == simdjson::SUCCESS)
            findings(f, where + "/findings", t.findings);
        if (element procs; o["processes"].get(procs) == simdjson::SUCCESS)
            for (auto [path, chain] : as_object(procs, where + "/processes"))
                t.findings.processes.emplace(std::string(path), strings(chain, where + "/processes"));
        if (element c; o["connections"].get(c) == simdjson::SUCCESS)
            t.findings.connections = connections(c, where + "/connections");
        if (element hoisted; o["hoistedImporters"].get(hoisted) == simdjson::SUCCESS)
            for (auto [name, found] : as_object(hoisted, where + "/hoistedImporters")) {
                const std::string at = where + "/hoistedImporters/" + std::string(name);
                object entry = as_object(found, at);
                t.findings.hoisted_importers[std::string(name)] = {
                    string(field(entry, "installed", at), at + "/installed"),
                    strings(field(entry, "importedBy", at), at + "/importedBy")};
            }
        if (element never; o["inputsNeverRead"].get(never) == simdjson::SUCCESS)
            t.inputs_never_read = strings(never, where + "/inputsNeverRead");
        std::vector<audit::Suggestion> given;
        if (element s; o["suggestions"].get(s) == simdjson::SUCCESS) {
            std::size_t i = 0;
            for (element item : as_array(s, where + "/suggestions")) {
                std::string at = fmt::format("{}/suggestions/{}", where, i++);
                object so = as_object(item, at);
                audit::Suggestion sg;
                sg.finding = string(field(so, "finding", at), at + "/finding");
                sg.declare = string(field(so, "declare", at), at + "/declare");
                sg.values = strings(field(so, "values", at), at + "/values");
                if (element ig; so["orIgnoreReads"].get(ig) == simdjson::SUCCESS)
                    sg.or_ignore = strings(ig, at + "/orIgnoreReads");
                sg.prefer_ignore = optional_field_string(so, "preferIgnoreReads");
                if (element instead; so["inPlaceOf"].get(instead) == simdjson::SUCCESS)
                    sg.in_place_of = strings(instead, at + "/inPlaceOf");
                given.push_back(std::move(sg));
            }
        }
        t.given_suggestions = std::move(given);
        return t;
    }

    void findings(element e, const std::string& where, audit::TaskFindings& f) const
    {
        for (auto [key, value] : as_object(e, where)) {
            std::string at = fmt::format("{}/{}", where, std::string_view(key));
            const audit::FindingKind* kind = audit::finding_kind_named(key);
            if (!kind) {
                fail(at, "not a kind of finding this qk knows");
                return;
            }
            if (!kind->list) {  // dependencyReads
                for (auto [project, paths] : as_object(value, at))
                    f.dependency_reads[std::string(project)] =
                        strings(paths, fmt::format("{}/{}", at, std::string_view(project)));
                continue;
            }
            f.*(kind->list) = strings(value, at);
        }
        // The report lists writes in .git among strayWrites; the audit keeps them apart (enforce allows them),
        // by the rules' own test: a .git anywhere, however cased, not under the root's .qk.
        auto& stray = f.stray_writes;
        auto git = std::stable_partition(stray.begin(), stray.end(),
                                         [](const std::string& p) { return special_tree(p) != SpecialDir::git; });
        f.git_writes.assign(git, stray.end());
        stray.erase(git, stray.end());
    }
};

}  // namespace

namespace {

// Parses `padded` and reads it with `read` (a Reader's document or run_document).
template <class T, class Read>
Result<T> read_padded(const simdjson::padded_string& padded, const std::string& name, Read read)
{
    // One parser per thread, kept: its buffers, sized to the largest report yet, are reused rather than
    // allocated and faulted in again for each shard.
    thread_local simdjson::dom::parser parser;
    element doc;
    if (auto err = parser.parse(padded).get(doc); err != simdjson::SUCCESS) {
        // The configuration reader says where, which simdjson does not.
        auto located = workspace::parse_json(std::string_view(padded.data(), padded.size()), name);
        if (!located)
            return error(located.error().message + " (not a qk report)");
        return error(fmt::format("{}: not a qk report: {}", name, simdjson::error_message(err)));
    }
    Reader reader(name);
    T out = read(reader, doc);
    if (reader.failure())
        return *reader.failure();
    return out;
}

auto sandbox_document = [](Reader& r, element doc) { return r.document(doc); };
auto run_document = [](Reader& r, element doc) { return r.run_document(doc); };

// Read straight into simdjson's padded buffer: a shard's report can be a megabyte or more.
Result<simdjson::padded_string> load_padded(const std::string& path)
{
    simdjson::padded_string padded;
    if (simdjson::padded_string::load(path).get(padded) != simdjson::SUCCESS) {
        QK_TRY(text, read_file(path));  // for its error, which says why the file cannot be read
        return simdjson::padded_string(*text);
    }
    return padded;
}

}  // namespace

Result<audit::RunAudit> read_sandbox_report(std::string_view json, const std::string& name)
{
    return read_padded<audit::RunAudit>(simdjson::padded_string(json), name, sandbox_document);
}

Result<RunReport> read_run_report(std::string_view json, const std::string& name)
{
    return read_padded<RunReport>(simdjson::padded_string(json), name, run_document);
}

Result<audit::RunAudit> load_sandbox_report(const std::string& path)
{
    QK_TRY(padded, load_padded(path));
    return read_padded<audit::RunAudit>(*padded, path, sandbox_document);
}

Result<AnyReport> load_report(const std::string& path)
{
    QK_TRY(padded, load_padded(path));
    return read_padded<AnyReport>(*padded, path, [](Reader& r, element doc) {
        AnyReport out;
        // A --sandbox-report names its mode; a --report does not.
        simdjson::dom::object top;
        element mode;
        if (doc.get(top) == simdjson::SUCCESS && top["mode"].get(mode) == simdjson::SUCCESS)
            out.sandbox = r.document(doc);
        else
            out.run = r.run_document(doc);
        return out;
    });
}

}  // namespace qk::report
