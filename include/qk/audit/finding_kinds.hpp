// The one table of finding kinds: each kind's JSON name, its list in TaskFindings, the summary's words,
// whether it counts as going beyond, what enforce makes of it, how `qk report check` asks it again and
// where a suggestion declares it. TaskFindings, rejudge, suggestions, the report's writer and reader, the
// summary, the report page and the tests of the schema and of docs/sandbox.md all read it, so a new kind
// is one row here (and its classifier); a member of TaskFindings with no row fails the build.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/rules/rules.hpp"

namespace qk::audit
{

// Which run lists a kind: the audit (it records and judges), or enforce (what it refused or did not keep;
// the run lists these instead of the audit's).
enum class KindRun : std::uint8_t { audit, enforce };

// How `qk report check` asks a kind again of today's rules (audit::rejudge): as the read or the write it
// was, as the host and port it reached (asked of the target's declared network), kept as found (a report
// names it but holds nothing the rules can place: a package, a call, a path outside the workspace), or not
// at all (it is not the task's going beyond: nothing to declare).
enum class Rejudge : std::uint8_t { read, write, network, kept, none };

// How audit::suggest answers a kind, where `declare` says; the suggestions come by run, then in this order
// (what to read before what to write, as a target names its inputs before its outputs), then in the
// table's.
enum class SuggestAs : std::uint8_t {
    // Each path as an input, or in ignoreReads if it cannot change the result; not a name made for one
    // run, what it wrote itself outside its outputs (that output covers it) or what the run declares once.
    reads,
    // As reads, less those in the projects it depends on that it read more of: the `^default` suggested
    // for those keys them (manifestReads).
    reads_not_in_dependencies,
    // As writes, but under Landlock alone a declared file output, which it cannot create, by its directory;
    // nothing for qk's cache, a link pointing away or an output itself (refusedWrites).
    file_outputs,
    // Each path as an output, a directory it created outside its outputs as one; not a name made for one run.
    writes,
    dependencies, // a `^` input for the files of the projects it depends on (dependencyReads)
    listed,       // the entries as they are listed: packages, "host:port" patterns
    none,         // nothing to declare: `declare` is null
};

// Where the audit's summary says a kind of a task: under the task, in the table's order, what it read
// before what it wrote and the projects it read in; or on lines of its own.
enum class SummaryAs : std::uint8_t {
    reads,         // its count, then each path the run does not declare once for many tasks, siblings folded
    likely_inputs, // as reads, saying they are likely inputs unless siblings are folded (a tool finding paths)
    writes,        // its count, then each path, a directory it created as one line with how many files
    projects,      // the projects it depends on that it read in, each with how many files
    // Said on lines of their own: for the run (manifestReads at the top, unkeyedReads at the end, the
    // network's), beside the task's lines (temporaryFiles, the packages, undeclaredNetwork) or by enforce's
    // summary (sandbox_summary_enforce.cpp, each with what to do).
    apart,
};

struct FindingKind {
    const char* name;        // the JSON name in --sandbox-report and the run report: a contract, never changed
    TaskFindings::List list; // its paths; null for dependencyReads (a map by project)
    // Paths the report lists under the same name that count for nothing but a finding: strayWrites' writes
    // in .git (git_writes), which enforce allows. Null for the other kinds.
    TaskFindings::List also;
    // In words: "3 reads outside its inputs" is a count, `one` or `many` ("read", "reads") and `words`
    // ("outside its inputs"); a kind without a noun ("" and "") says "2 written outside its outputs".
    const char* one;
    const char* many;
    const char* words;
    KindRun run;
    // The rules' finding an access of this kind is (rules::Finding::none for what the rules do not name:
    // enforce's own lists, temporary files). Whether enforce refuses it is rules::enforce_allows's answer.
    rules::Finding rule;
    // Whether it counts as the task going beyond what it declares (RunAudit's wentBeyond, the page's
    // filter): for the audit's kinds, exactly what enforce refuses (a test holds them to it).
    bool beyond;
    // Whether enforce refused it in the workspace: a task that goes on after a refusal may take another
    // branch, so its result is not cached (TaskFindings::refused).
    bool refusal;
    // Whether a result with it is still whole, so it may be shared as verified (audit::verified).
    bool whole;
    Rejudge rejudge;
    // Where its suggestion declares it ("inputs", "outputs", "externalDependencies", "packageExtensions",
    // "network": the target's qk:sandbox.network);
    // null when no declaration answers it (audit::suggest gives none).
    const char* declare;
    SuggestAs suggest;  // how: SuggestAs::none exactly when `declare` is null
    SummaryAs summary;

    // Every field named, so a row cannot leave one out and take a default without a word.
    constexpr FindingKind(const char* name_, TaskFindings::List list_, TaskFindings::List also_, const char* one_,
                          const char* many_, const char* words_, KindRun run_, rules::Finding rule_, bool beyond_,
                          bool refusal_, bool whole_, Rejudge rejudge_, const char* declare_, SuggestAs suggest_,
                          SummaryAs summary_)
        : name(name_), list(list_), also(also_), one(one_), many(many_), words(words_), run(run_), rule(rule_),
          beyond(beyond_), refusal(refusal_), whole(whole_), rejudge(rejudge_), declare(declare_), suggest(suggest_),
          summary(summary_)
    {
    }

    // Whether `f` holds a finding of this kind that counts (in `list`, or dependency_reads), and whether
    // it holds any the report lists under its name (`also` too): a task with either is not clean.
    bool in(const TaskFindings& f) const;
    bool held(const TaskFindings& f) const;
};

// Every kind, in the order the reports write them.
std::span<const FindingKind> finding_kinds();

// The kind whose paths `list` holds: any list but git_writes (strayWrites' `also`) and
// created_directories (strayWrites grouped), which are no kinds of their own.
const FindingKind& finding_kind(TaskFindings::List list);
// The kind the report calls `name`; null for a name this qk does not know.
const FindingKind* finding_kind_named(std::string_view name);

// "1 read outside its inputs", "3 reads outside its inputs", "2 written outside its outputs".
std::string finding_count(const FindingKind& kind, std::size_t n);
// As the page's filters and headings name a kind: "reads outside its inputs".
std::string finding_words(const FindingKind& kind);

} // namespace qk::audit
