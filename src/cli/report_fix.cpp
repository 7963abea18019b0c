// qk report fix (report_fix.hpp): the plan (report_fix_plan.hpp) spliced into each file's text
// (workspace/json_edit.hpp), then printed as a unified diff or written. What cannot be written so is said,
// to do by hand.
#include "report_fix.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/report/report_reader.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/unified_diff.hpp"
#include "qk/workspace/json_edit.hpp"
#include "qk/workspace/package_extensions.hpp"
#include "qk/workspace/workspace.hpp"
#include "report_fix_plan.hpp"

namespace qk::cli {

namespace {

bool is_package_json(std::string_view file) { return file == "package.json" || file.ends_with("/package.json"); }

// `text` (the file `e.file`) with the edit spliced in: the values appended to the array, or the array
// made, holding what was inherited and the values, with the objects on the way that are missing.
Result<std::string> splice(const std::string& text, const FixEdit& e)
{
    QK_TRY(doc, workspace::parse_json(text, e.file, workspace::TrailingCommas::allow));
    std::vector<std::string> items;
    for (const std::string& v : e.values)
        items.push_back(e.json ? v : workspace::json_string(v));
    std::vector<std::string> all = e.inherited;
    all.insert(all.end(), items.begin(), items.end());
    const std::string list = fmt::format("[{}]", fmt::join(all, ", "));
    const workspace::Json* object = &*doc;
    // A package.json's "nx" goes after what the package says of itself, as a person adds it; a member of
    // a configuration object goes first, beside the key it is read with.
    auto place = [&](const workspace::Json* in) {
        return in == &*doc && is_package_json(e.file) ? workspace::MemberPlace::last : workspace::MemberPlace::first;
    };
    for (std::size_t i = 0; i < e.path.size(); ++i) {
        const workspace::Json* next = object->find(e.path[i]);
        if (!next) {
            std::vector<std::string> keys(e.path.begin() + static_cast<std::ptrdiff_t>(i), e.path.end());
            keys.push_back(e.key);
            return workspace::insert_nested_member(text, *object, keys, list, place(object));
        }
        if (!next->is_object())
            return error(fmt::format("{}:{}:{}: {} is not an object to add {} to", e.file, next->line(), next->column(),
                                     e.path[i], e.key));
        object = next;
    }
    if (const workspace::Json* existing = object->find(e.key)) {
        // "network": false becomes the list of what the task reached.
        if (existing->is_bool() || existing->is_null())
            return workspace::replace_literal(text, *existing, list);
        if (!existing->is_array())
            return error(fmt::format("{}:{}:{}: {} is not an array to add to", e.file, existing->line(),
                                     existing->column(), e.key));
        return workspace::append_to_array(text, *existing, items);
    }
    return workspace::insert_member(text, *object, e.key, list, place(object));
}

// `text` (plan.extensions_file's) with each of the plan's packageExtensions added; one that cannot be is
// said by hand, with the lines to add.
std::string add_extensions(std::string text, FixPlan& plan)
{
    const bool yaml = plan.extensions_file.ends_with(".yaml");
    for (const workspace::PackageExtension& e : plan.extensions) {
        auto edited = yaml ? workspace::add_package_extension_yaml(text, e) : workspace::add_package_extension_json(text, e);
        if (!edited) {
            plan.by_hand.push_back(fmt::format("{}: add packageExtensions '{}': {{dependencies: {{'{}': '{}'}}}}: {}",
                                               printable(plan.extensions_file), printable(e.importer),
                                               printable(e.name), printable(e.version),
                                               printable(edited.error().message)));
            continue;
        }
        text = std::move(*edited);
    }
    return text;
}

}  // namespace

int run_report_fix(const ReportFixOptions& options)
{
    audit::RunAudit found = or_fatal(report::load_sandbox_report(options.report));
    auto root = or_fatal(workspace::Workspace::find_root(options.directory));
    workspace::Workspace ws = or_fatal(workspace::Workspace::load(root));
    FixPlan plan = plan_report_fix(found, ws, scan_when_asked(ws), options.declare_network);
    std::string out;
    // The files to edit, each once: those of the edits (grouped by file), and the one packageExtensions goes in.
    std::vector<std::string> files;
    for (const FixEdit& e : plan.edits)
        if (files.empty() || files.back() != e.file)
            files.push_back(e.file);
    if (!plan.extensions.empty() &&
        std::find(files.begin(), files.end(), plan.extensions_file) == files.end())
        files.push_back(plan.extensions_file);
    for (const std::string& file : files) {
        const std::string path = (root / file).string();
        // A workspace without pnpm-workspace.yaml gets one for its packageExtensions.
        std::error_code absent;
        const bool made = file == plan.extensions_file && !std::filesystem::exists(path, absent);
        const std::string before = made ? std::string() : or_fatal(read_file(path));
        std::string text = before;
        for (const FixEdit& e : plan.edits) {
            if (e.file != file || e.values.empty())
                continue;
            auto edited = splice(text, e);
            if (!edited) {
                std::string where = fmt::format("{}.{}", fmt::join(e.path, "."), e.key);
                plan.by_hand.push_back(fmt::format("{}: add {} to {}: {}", printable(file),
                                                   printable(fmt::format("{}", fmt::join(e.values, ", "))),
                                                   printable(where), printable(edited.error().message)));
                continue;
            }
            text = std::move(*edited);
        }
        if (file == plan.extensions_file)
            text = add_extensions(std::move(text), plan);
        if (text == before)
            continue;
        // What is written must still be what it was: JSON that qk and Nx read (never a half-made edit). The
        // YAML is checked as it is edited.
        if (!file.ends_with(".yaml"))
            if (auto still = workspace::parse_json(text, file, workspace::TrailingCommas::allow); !still) {
                plan.by_hand.push_back(fmt::format("{}: the edits would not leave valid JSON ({}); nothing written",
                                                   printable(file), printable(still.error().message)));
                continue;
            }
        if (options.write) {
            // The file keeps its mode; one that is a link is not replaced by a file of its own.
            struct stat st_before {};
            st_before.st_mode = S_IFREG | 0644;
            if (!made && (::lstat(path.c_str(), &st_before) != 0 || !S_ISREG(st_before.st_mode))) {
                plan.by_hand.push_back(fmt::format("{}: not a regular file (a link?); nothing written", printable(file)));
                continue;
            }
            if (auto st = write_file_atomically(path, text, {.mode = static_cast<mode_t>(st_before.st_mode & 07777)}); !st)
                throw FatalError(st.error());
            out += fmt::format("qk report fix: wrote {}\n", printable(file));
        } else {
            out += unified_diff(before, text, file);
        }
    }
    // The diff alone on stdout, so that `qk report fix r.json | git apply` takes it; the rest on stderr.
    std::string notes;
    if (!plan.extensions.empty())
        plan.by_hand.push_back(fmt::format("then run pnpm install: pnpm-lock.yaml records the dependencies "
                                           "{} now declares ({}), and the keys of the tasks that read them hold "
                                           "them",
                                           printable(plan.extensions_file), plan.extensions.size()));
    if (out.empty())
        notes = "qk report fix: nothing to write: the declarations already hold what the report suggests\n";
    for (const std::string& line : plan.by_hand)
        notes += "qk report fix: by hand: " + line + "\n";
    (void)write_all(STDOUT_FILENO, out);  // a closed stdout changes nothing written
    (void)write_all(STDERR_FILENO, notes);
    return 0;
}

}  // namespace qk::cli
