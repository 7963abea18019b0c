// The table of finding kinds (qk/audit/finding_kinds.hpp), and the check that TaskFindings has no list
// the table leaves out.
#include "qk/audit/finding_kinds.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace qk::audit
{

namespace
{

using F = TaskFindings;
using rules::Finding;
constexpr KindRun kAudit = KindRun::audit;
constexpr KindRun kEnforce = KindRun::enforce;

// The words are the summary's (sandbox_summary.cpp, sandbox_summary_enforce.cpp say them through this
// table where their lines count a kind) and the report page's. Columns: name, list, also, the words (one,
// many, words), run, rule, beyond, refusal, whole, rejudge, declare, suggest, summary.
constexpr FindingKind kKinds[] = {
    {"readsOutsideInputs", &F::reads_outside_inputs, nullptr, "read", "reads", "outside its inputs", kAudit,
     Finding::read_outside_inputs, true, false, false, Rejudge::read, "inputs", SuggestAs::reads, SummaryAs::reads},
    {"tsconfigReads", &F::tsconfig_reads, nullptr, "TypeScript configuration", "TypeScript configurations",
     "read outside its inputs", kAudit, Finding::tsconfig_read, true, false, false, Rejudge::read, "inputs", SuggestAs::reads, SummaryAs::likely_inputs},
    {"strayWrites", &F::stray_writes, &F::git_writes, "", "", "written outside its outputs", kAudit,
     Finding::stray_write, true, false, false, Rejudge::write, "outputs", SuggestAs::writes, SummaryAs::writes},
    // Created and removed again: they leave nothing, and enforce would discard nothing.
    {"temporaryFiles", &F::temporary_files, nullptr, "temporary file", "temporary files",
     "outside its outputs, created and removed again", kAudit, Finding::none, false, false, true, Rejudge::none,
     nullptr, SuggestAs::none, SummaryAs::apart},
    {"unkeyedReads", &F::unkeyed_reads, nullptr, ".git or dotenv file", ".git or dotenv files", "read, not in its key",
     kAudit, Finding::unkeyed_read, false, false, false, Rejudge::read, nullptr, SuggestAs::none, SummaryAs::apart},
    {"manifestReads", &F::manifest_reads, nullptr, "workspace package.json", "workspace package.json files", "read",
     kAudit, Finding::manifest_read, true, false, false, Rejudge::read, "inputs", SuggestAs::reads_not_in_dependencies, SummaryAs::apart},
    {"toolchainReads", &F::toolchain_reads, nullptr, "version or package manager configuration",
     "version or package manager configurations", "outside its inputs", kAudit, Finding::toolchain_read, true, false,
     false, Rejudge::read, "inputs", SuggestAs::reads, SummaryAs::reads},
    {"dependencyReads", nullptr, nullptr, "file", "files", "read in projects it depends on", kAudit,
     Finding::dependency_read, true, false, false, Rejudge::read, "inputs", SuggestAs::dependencies, SummaryAs::projects},
    {"unkeyedPackages", &F::unkeyed_packages, nullptr, "installed package", "installed packages",
     "read, not in its key", kAudit, Finding::unkeyed_package, false, false, false, Rejudge::kept,
     "externalDependencies", SuggestAs::listed, SummaryAs::apart},
    {"hoistedPackages", &F::hoisted_packages, nullptr, "installed package", "installed packages",
     "read through pnpm's hoisting", kAudit, Finding::hoisted_package, false, false, false, Rejudge::kept,
     "packageExtensions", SuggestAs::listed, SummaryAs::apart},
    // The network, as the spec keeps it: open unless the target declares it. What its declaration allows
    // (everything, undeclared) is listed and leaves the result whole; the machine's own is listed apart and
    // never judged (enforce leaves a task a loopback of its own); what a declared false or list does not
    // name goes beyond, as enforce gives it no route. Declaring a host makes the result no more
    // reproducible by its key: that is the remote cache's uploadNetwork policy, not a finding.
    {"network", &F::network, nullptr, "host", "hosts", "reached on the network", kAudit, Finding::none, false, false,
     true, Rejudge::network, nullptr, SuggestAs::none, SummaryAs::apart},
    {"loopbackNetwork", &F::loopback_network, nullptr, "port", "ports", "reached on its own machine (loopback)",
     kAudit, Finding::none, false, false, true, Rejudge::none, nullptr, SuggestAs::none, SummaryAs::apart},
    {"undeclaredNetwork", &F::undeclared_network, nullptr, "host", "hosts", "reached outside its declared network",
     kAudit, Finding::undeclared_network, true, false, false, Rejudge::network, "network", SuggestAs::listed, SummaryAs::apart},
    {"refusedReads", &F::refused_reads, nullptr, "read", "reads", "refused", kEnforce, Finding::none, true, true, false,
     Rejudge::read, "inputs", SuggestAs::reads, SummaryAs::apart},
    {"refusedWrites", &F::refused_writes, nullptr, "write", "writes", "refused", kEnforce, Finding::none, true, true,
     false, Rejudge::write, "outputs", SuggestAs::file_outputs, SummaryAs::apart},
    {"discardedWrites", &F::discarded_writes, nullptr, "", "", "written outside its outputs, not kept", kEnforce,
     Finding::none, true, false, false, Rejudge::write, "outputs", SuggestAs::writes, SummaryAs::apart},
    // Refused because another task made the file again after its rules were built: not its doing.
    {"replacedReads", &F::replaced_reads, nullptr, "read", "reads",
     "refused of what it may read, made again while it ran", kEnforce, Finding::none, false, true, true, Rejudge::none,
     nullptr, SuggestAs::none, SummaryAs::apart},
    {"refusedUnplaced", &F::refused_unplaced, nullptr, "open", "opens",
     "refused through a descriptor or directory of a process that qk cannot place in the workspace", kEnforce,
     Finding::none, true, true, false, Rejudge::kept, nullptr, SuggestAs::none, SummaryAs::apart},
    // Probes outside the workspace (a home directory) that tools make and go on: the result is whole.
    {"refusedOutside", &F::refused_outside, nullptr, "path", "paths", "refused outside the workspace", kEnforce,
     Finding::none, true, false, true, Rejudge::kept, nullptr, SuggestAs::none, SummaryAs::apart},
    {"refusedCalls", &F::refused_calls, nullptr, "system call", "system calls", "refused", kEnforce, Finding::none,
     true, true, false, Rejudge::kept, nullptr, SuggestAs::none, SummaryAs::apart},
    // What its declared network held from it: the proxy refused it (add the host to declare it), or the
    // namespace gave it no route. The task may have gone on another way: its result is not kept.
    {"refusedNetwork", &F::refused_network, nullptr, "connection", "connections", "refused by its declared network",
     kEnforce, Finding::none, true, true, false, Rejudge::kept, nullptr, SuggestAs::none, SummaryAs::apart},
};

// How many members an aggregate has: the most initializers it takes, each converting to any member.
struct AnyMember {
    template <class T> constexpr operator T() const; // NOLINT(google-explicit-constructor): never called, only deduced
};

template <class T, class... Members> constexpr std::size_t member_count()
{
    if constexpr (requires { T{Members{}..., AnyMember{}}; })
        return member_count<T, Members..., AnyMember>();
    else
        return sizeof...(Members);
}

// TaskFindings' members that are neither a kind's list nor its `also`: created_directories (strayWrites
// grouped), processes (who made each access), hoisted_importers (who imports each hoisted package) and
// connections (what stands behind each network entry).
constexpr std::size_t kNotKinds = 4;
constexpr std::size_t lists_in_rows()
{
    std::size_t n = 0;
    for (const FindingKind& k : kKinds)
        n += 1 + (k.also ? 1 : 0);
    return n;
}
static_assert(member_count<TaskFindings>() == lists_in_rows() + kNotKinds,
              "every list of TaskFindings is a kind's (or its `also`) with its row in kKinds");

// A place to declare a kind is a way to suggest it, and the other way round; a kind with no list of its
// own is dependencyReads, suggested and listed by project.
constexpr bool rows_agree()
{
    for (const FindingKind& k : kKinds) {
        if ((k.declare == nullptr) != (k.suggest == SuggestAs::none))
            return false;
        if ((k.list == nullptr) != (k.suggest == SuggestAs::dependencies) ||
            (k.list == nullptr) != (k.summary == SummaryAs::projects))
            return false;
    }
    return true;
}
static_assert(rows_agree(), "a kind's declare and suggest agree, and only dependencyReads has no list");

bool any_dependency_read(const TaskFindings& f)
{
    return std::any_of(f.dependency_reads.begin(), f.dependency_reads.end(),
                       [](const auto& entry) { return !entry.second.empty(); });
}

} // namespace

bool FindingKind::in(const TaskFindings& f) const
{
    return list ? !(f.*list).empty() : any_dependency_read(f);
}

bool FindingKind::held(const TaskFindings& f) const
{
    return in(f) || (also && !(f.*also).empty());
}

std::span<const FindingKind> finding_kinds()
{
    return kKinds;
}

const FindingKind& finding_kind(TaskFindings::List list)
{
    for (const FindingKind& k : kKinds)
        if (k.list == list)
            return k;
    return kKinds[0]; // git_writes or created_directories, which no caller counts alone
}

const FindingKind* finding_kind_named(std::string_view name)
{
    for (const FindingKind& k : kKinds)
        if (name == k.name)
            return &k;
    return nullptr;
}

std::string finding_count(const FindingKind& kind, std::size_t n)
{
    if (*kind.one == '\0')
        return fmt::format("{} {}", n, kind.words);
    return fmt::format("{} {} {}", n, n == 1 ? kind.one : kind.many, kind.words);
}

std::string finding_words(const FindingKind& kind)
{
    return *kind.many == '\0' ? std::string(kind.words) : fmt::format("{} {}", kind.many, kind.words);
}

} // namespace qk::audit
