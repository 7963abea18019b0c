#include "recorded_reads.hpp"

#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qk::sandbox {

namespace {

using rules::PathClass;

// A read the key does not hold, and that may change the result: what a set must check.
bool unkeyed(PathClass c)
{
    switch (c) {
    case PathClass::git:
    case PathClass::dotenv:
    case PathClass::effect_file:
    case PathClass::covered_manifest:
    case PathClass::manifest:
    case PathClass::toolchain:
    case PathClass::dependency_project:
    case PathClass::tsconfig:
    case PathClass::installed_package:
    case PathClass::other: return true;
    // Held by the key (inputs, what every key holds, dependencies' outputs, packages it counts), the
    // task's own (outputs, scratch, warm paths), declared irrelevant (ignoreReads), or not the
    // workspace's (outside, qk's state, node_modules beyond packages' manifests). Each named, no default:
    // a new class is a build failure here until someone says whether --record must check its reads.
    case PathClass::outside:
    case PathClass::qk_state:
    case PathClass::node_modules:
    case PathClass::installed_files:
    case PathClass::scratch:
    case PathClass::output:
    case PathClass::output_directory:
    case PathClass::warm:
    case PathClass::input:
    case PathClass::always:
    case PathClass::json_input:
    case PathClass::dependency_output:
    case PathClass::ignored_read:
    case PathClass::git_machinery: return false;
    }
    return false;
}

}  // namespace

Result<key::ReadSet> recorded_reads(const record::Recording& recording, const rules::Rules& rules,
                                    const std::filesystem::path& root)
{
    if (!recording.complete())
        return error(fmt::format("the recording is incomplete: {}", fmt::join(recording.incomplete_reasons(), "; ")));
    key::ReadSet set;
    for (const auto* entry : recording.sorted_paths()) {
        const auto& [path, access] = *entry;
        if (!(access & (record::kRead | record::kProbe)))
            continue;
        auto rel = rules.relative(path);
        if (!rel || rel->empty())
            continue;
        rules::Verdict v = rules.read(path);
        if (!unkeyed(v.why))
            continue;
        if (access & (record::kWrite | record::kCreate | record::kRemove))
            return error(fmt::format("it read {}, which it also changed, so what it read is unknown", *rel));
        std::string name(*rel);
        std::error_code ec;
        if (std::filesystem::is_directory(root / name, ec))
            continue;  // opened to be listed: a read set keys files
        QK_TRY(content, key::current_content(root, name));
        // Another task running beside it changed what it read, as it ran: what it saw is unknown.
        if ((access & record::kRead) && !*content)
            return error(fmt::format("it read {}, which was removed while it ran", name));
        if (!(access & record::kRead) && *content)
            return error(fmt::format("it looked for {}, which appeared while it ran", name));
        set.reads.push_back({std::move(name), *content});
    }
    return set;
}

}  // namespace qk::sandbox
