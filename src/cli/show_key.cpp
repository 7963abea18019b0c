// A task key printed for a person (`qk show task`) and as JSON (`--json`): every part, with the files
// each input selected, so that a user can see why a key moved or why a file is not in it. The text
// escapes every name from the workspace as it formats it (qk::printable); the JSON keeps the bytes.
#include "show_key.hpp"

#include <fmt/format.h>

#include "qk/key/cache.hpp"
#include "qk/key/read_sets.hpp"
#include "qk/util/json_writer.hpp"
#include "qk/util/printable.hpp"

namespace qk::cli {

namespace {

const char* source_name(key::KeyPackages::Source s)
{
    switch (s) {
    case key::KeyPackages::Source::none:
        return "none";
    case key::KeyPackages::Source::importers:
        return "importers";
    case key::KeyPackages::Source::named:
        return "named";
    }
    return "none";
}

std::string short_hash(const key::Hash128& h) { return h.hex().substr(0, 12); }

}  // namespace

// The read sets --record saved under the key (key/read_sets.hpp): what restoring its results checks.
std::string recorded_reads_text(key::Session& s, const key::TaskKey& k)
{
    auto store = key::ReadSetStore::open(key::LocalCache::directory(s.workspace().root()));
    auto sets = store.sets(k.hash);
    if (!sets)
        return "\nRecorded reads: " + printable(sets.error().message) + "\n";
    if (sets->empty())
        return "\nRecorded reads: none saved for this key (qk run-many --record saves them for a target with "
               "qk:ultracache)\n";
    std::string out = fmt::format("\nRecorded reads, checked before a result is restored ({} set{}, newest first):\n",
                                  sets->size(), sets->size() == 1 ? "" : "s");
    for (const key::ReadSet& set : *sets) {
        out += fmt::format("  saved {}, result {}{}\n", printable(set.created), short_hash(set.result),
                           set.reads.empty() ? ": it read nothing its key leaves out" : "");
        for (const key::RecordedRead& r : set.reads)
            out += fmt::format("    {}  {}\n", r.content ? short_hash(*r.content) : std::string("absent      "),
                               printable(r.path));
    }
    return out;
}

std::string key_text(key::Session& s, const key::TaskKey& k, const std::vector<std::string>& depends_on)
{
    const auto& files = s.files();
    std::string out =
        fmt::format("{}\n  hash        {}\n  command     {}\n", printable(k.task), k.hash.hex(), k.command_hash.hex());
    out += fmt::format("  dependsOn   {}\n", depends_on.empty() ? "(nothing)" : printable_join(depends_on, ", "));
    out += fmt::format("  outputs     {}\n",
                       k.outputs.paths.empty() ? "(none)" : printable_join(k.outputs.paths, ", "));
    if (!k.outputs.dropped.empty())
        out += fmt::format("              dropped, their tokens name nothing: {}\n",
                           printable_join(k.outputs.dropped, ", "));

    out += "\nFiles held whole, by input:\n";
    for (const key::KeyGroup& g : k.groups) {
        const key::FilesetGroup& fs = *k.inputs.filesets[g.fileset];
        out += fmt::format("  {}: {} ({} file{})\n", printable(fs.origin), printable_join(fs.patterns, " "),
                           g.files->size(), g.files->size() == 1 ? "" : "s");
        for (std::uint32_t f : *g.files)
            out += fmt::format("    {}  {}\n", short_hash(files.hash_of(f)), printable(files.files()[f]));
    }
    out += "  always held:\n";
    for (const key::KeyFile& f : k.always)
        out += fmt::format("    {}  {}\n", short_hash(f.hash), printable(f.path));
    if (!k.linked_trees.empty())
        out += "  the trees that links among them lead to:\n";
    for (const auto& tree : k.linked_trees) {
        const key::KeyLinkedTree& t = *tree;
        out += fmt::format("    {} -> {} ({} entr{}, {})\n", printable(t.link), printable(t.target), t.files->size(),
                           t.files->size() == 1 ? "y" : "ies", short_hash(t.hash));
        for (const std::string& d : t.targets)
            if (d != t.target)
                out += fmt::format("      reaching also {}\n", printable(d));
        for (const std::string& f : t.target_files)
            out += fmt::format("      reaching also {}\n", printable(f));
        for (const key::KeyFile& f : *t.files)
            out += fmt::format("      {}  {}/{}\n", short_hash(f.hash), printable(t.link), printable(f.path));
    }
    if (!k.json_files.empty()) {
        out += "\nJSON files, by the fields selected:\n";
        for (const key::KeyJsonFile& j : k.json_files)
            out += fmt::format("  {}  {} fields [{}] less [{}]\n", short_hash(j.hash), printable(j.path),
                               printable_join(j.fields, ", "), printable_join(j.exclude_fields, ", "));
    }
    out += "\nFiles held only by what they change (a read of one is outside the inputs):\n";
    for (const key::KeyEffectFile& e : k.effect_files)
        out += fmt::format("  {}  {}: {}\n", short_hash(e.hash), printable(e.path), printable(e.what));

    const key::KeyPackages& p = k.packages;
    out += "\nInstalled packages: ";
    if (p.source == key::KeyPackages::Source::none)
        out += "none keyed (no pnpm-lock.yaml)\n";
    else if (p.source == key::KeyPackages::Source::importers)
        out += fmt::format("{} from {}, what importers {} install\n", p.closure ? p.closure->size() : 0,
                           printable(p.lockfile), printable_join(p.importers, ", "));
    else
        out += fmt::format("{} from {}, externalDependencies [{}] and what they depend on\n",
                           p.closure ? p.closure->size() : 0, printable(p.lockfile), printable_join(p.names, ", "));
    for (const auto& [name, h] : k.env)
        out += fmt::format("Environment: {} ({})\n", printable(name), short_hash(h));
    for (const auto& [cmd, h] : k.runtime)
        out += fmt::format("Runtime: {} ({})\n", printable(cmd), short_hash(h));
    for (const auto& [id, h] : k.dependency_tasks)
        out += fmt::format("Dependency task: {} ({})\n", printable(id), short_hash(h));
    for (const key::KeyFile& f : k.dependency_outputs)
        out += fmt::format("Dependency output: {} ({})\n", printable(f.path), short_hash(f.hash));
    out += recorded_reads_text(s, k);
    return out;
}

std::string key_json(key::Session& s, const key::TaskKey& k, const std::vector<std::string>& depends_on)
{
    const auto& files = s.files();
    const auto& ws = s.workspace();
    JsonWriter w;
    auto file = [&](const std::string& path, const key::Hash128& h) {
        w.begin_object().key("path").value(path).key("hash").value(h.hex()).end_object();
    };
    w.begin_object();
    w.key("task").value(k.task).key("hash").value(k.hash.hex()).key("commandHash").value(k.command_hash.hex());
    w.key("dependsOn").strings(depends_on);
    w.key("outputs").strings(k.outputs.paths).key("droppedOutputs").strings(k.outputs.dropped);
    w.key("inputs").begin_array();
    for (const key::KeyGroup& g : k.groups) {
        const key::FilesetGroup& fs = *k.inputs.filesets[g.fileset];
        w.begin_object().key("origin").value(fs.origin).key("project");
        if (fs.project)
            w.value(ws.projects()[*fs.project].name);
        else
            w.null();
        w.key("patterns").strings(fs.patterns).key("hash").value(g.hash.hex()).key("files").begin_array();
        for (std::uint32_t f : *g.files)
            file(files.files()[f], files.hash_of(f));
        w.end_array().end_object();
    }
    w.end_array();
    w.key("always").begin_array();
    for (const key::KeyFile& f : k.always)
        file(f.path, f.hash);
    w.end_array();
    w.key("linkedTrees").begin_array();
    for (const auto& tree : k.linked_trees) {
        const key::KeyLinkedTree& t = *tree;
        w.begin_object().key("link").value(t.link).key("target").value(t.target);
        w.key("targets").strings(t.targets).key("targetFiles").strings(t.target_files);
        w.key("hash").value(t.hash.hex()).key("files").begin_array();
        for (const key::KeyFile& f : *t.files)
            file(f.path, f.hash);
        w.end_array().end_object();
    }
    w.end_array();
    w.key("effectFiles").begin_array();
    for (const key::KeyEffectFile& e : k.effect_files)
        w.begin_object().key("path").value(e.path).key("what").value(e.what).key("hash").value(e.hash.hex()).end_object();
    w.end_array();
    w.key("json").begin_array();
    for (const key::KeyJsonFile& j : k.json_files)
        w.begin_object()
            .key("path").value(j.path)
            .key("fields").strings(j.fields)
            .key("excludeFields").strings(j.exclude_fields)
            .key("hash").value(j.hash.hex())
            .end_object();
    w.end_array();
    w.key("env").begin_array();
    for (const auto& [name, h] : k.env)
        w.begin_object().key("name").value(name).key("hash").value(h.hex()).end_object();
    w.end_array();
    w.key("runtime").begin_array();
    for (const auto& [cmd, h] : k.runtime)
        w.begin_object().key("command").value(cmd).key("hash").value(h.hex()).end_object();
    w.end_array();
    const key::KeyPackages& p = k.packages;
    w.key("packages").begin_object().key("source").value(source_name(p.source));
    w.key("lockfile");
    if (p.lockfile.empty())
        w.null();
    else
        w.value(p.lockfile);
    w.key("importers").strings(p.importers).key("names").strings(p.names);
    w.key("count").value(static_cast<std::int64_t>(p.closure ? p.closure->size() : 0));
    w.key("hash").value(p.hash.hex()).end_object();
    w.key("dependencyTasks").begin_array();
    for (const auto& [id, h] : k.dependency_tasks)
        w.begin_object().key("task").value(id).key("hash").value(h.hex()).end_object();
    w.end_array();
    w.key("dependencyOutputs").begin_array();
    for (const key::KeyFile& f : k.dependency_outputs)
        file(f.path, f.hash);
    w.end_array();
    // What --record saved under the key; an unreadable manifest shows as none (the text form says why).
    auto sets = key::ReadSetStore::open(key::LocalCache::directory(s.workspace().root())).sets(k.hash);
    w.key("recordedReads").begin_array();
    for (const key::ReadSet& set : sets ? *sets : std::vector<key::ReadSet>{})
        key::write_read_set(w, set);
    w.end_array();
    w.end_object();
    return w.str() + "\n";
}

}  // namespace qk::cli
