#include "qk/audit/hoisted_importers.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <set>
#include <vector>

#include "qk/rules/installed_packages.hpp"
#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::audit {
namespace {

bool script_file(std::string_view file)
{
    static constexpr std::array<std::string_view, 8> kExtensions{".js", ".cjs", ".mjs", ".ts",
                                                                 ".cts", ".mts", ".jsx", ".tsx"};
    return std::any_of(kExtensions.begin(), kExtensions.end(), [&](std::string_view e) { return file.ends_with(e); });
}

// A TypeScript file (declarations included), which tsc resolves through node_modules whatever the name.
bool types_file(std::string_view file)
{
    static constexpr std::array<std::string_view, 3> kExtensions{".ts", ".cts", ".mts"};
    return std::any_of(kExtensions.begin(), kExtensions.end(), [&](std::string_view e) { return file.ends_with(e); });
}

// Node's built-in modules that npm also has a package of (events, buffer, util...): node's require and
// import take the built-in without looking in node_modules, so a script naming one is no importer of the
// package; tsc resolving a .d.ts's import of "events" does read it.
bool node_builtin(std::string_view name)
{
    static constexpr std::array<std::string_view, 16> kBuiltins{
        "assert", "buffer", "console", "constants", "crypto", "events", "os", "path",
        "process", "punycode", "querystring", "stream", "string_decoder", "timers", "url", "util"};
    return std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end();
}

// What precedes a module specifier in an import: `require(`, `from`, `import(`, `import`, or a triple-slash
// reference's `types=`, spaces and line breaks between.
bool import_before(std::string_view text, std::size_t quote)
{
    std::size_t end = quote;
    while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])))
        --end;
    const std::string_view before = text.substr(0, end);
    if (before.ends_with("types=") || before.ends_with("path="))
        return before.ends_with("types=");
    std::string_view head = before;
    if (head.ends_with('(')) {
        head.remove_suffix(1);
        while (!head.empty() && std::isspace(static_cast<unsigned char>(head.back())))
            head.remove_suffix(1);
        return head.ends_with("require") || head.ends_with("import") || head.ends_with("require.resolve");
    }
    auto word_ends = [&](std::string_view word) {
        return head.ends_with(word) &&
               (head.size() == word.size() || !std::isalnum(static_cast<unsigned char>(head[head.size() - word.size() - 1])));
    };
    return word_ends("from") || word_ends("import");
}

// The text of an installed script the task read, or nullopt. The task may have left anything at that
// path since (a FIFO that would block the audit, a link to /dev/zero, a file of gigabytes): only a
// regular file of a script's size is read, without following a link and without waiting.
std::optional<std::string> script_text(const std::string& path)
{
    constexpr off_t kLargest = 16 << 20;  // bundled scripts run to a few MiB
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kLargest)
        return std::nullopt;
    std::string text;
    if (!read_all(fd.get(), text, static_cast<std::size_t>(st.st_size) + 1) ||
        text.size() > static_cast<std::size_t>(kLargest))
        return std::nullopt;
    return text;
}

}  // namespace

bool imports_package(std::string_view source, std::string_view name)
{
    if (name.empty())
        return false;
    for (std::size_t at = source.find(name); at != std::string_view::npos; at = source.find(name, at + 1)) {
        if (at == 0)
            continue;
        const char quote = source[at - 1];
        if (quote != '"' && quote != '\'' && quote != '`')
            continue;
        const std::size_t after = at + name.size();
        if (after >= source.size() || (source[after] != quote && source[after] != '/'))
            continue;  // "events-x" or "events.js" is another package or a file
        if (import_before(source, at - 1))
            return true;
    }
    return false;
}

std::map<std::string, TaskFindings::HoistedImport> hoisted_importers(
    const record::Recording& recording, const rules::Rules& rules,
    const std::map<std::string, std::uint32_t>& hoisted)
{
    std::map<std::string, TaskFindings::HoistedImport> out;
    const rules::InstalledPackages* installed = rules.installed();
    if (!installed || hoisted.empty())
        return out;
    std::map<std::string, std::set<std::string>> importers;
    for (const auto& [path, access] : recording.paths()) {
        if (!(access & record::kRead))
            continue;
        auto rel = rules.relative(path);
        auto own = rel ? installed->own_file(*rel) : std::nullopt;
        if (!own || !script_file(own->file))
            continue;
        const workspace::PnpmSnapshot& importer = installed->snapshot(own->snapshot);
        std::vector<std::string_view> wanted;
        for (const auto& [name, snapshot] : hoisted)
            if (name != importer.name && !importer.dependencies.contains(name) &&
                !importer.optional_dependencies.contains(name) && (types_file(own->file) || !node_builtin(name)))
                wanted.push_back(name);
        if (wanted.empty())
            continue;
        auto text = script_text(path);
        if (!text)
            continue;  // gone since, or no script now: nothing to say of it
        for (std::string_view name : wanted)
            if (imports_package(*text, name))
                importers[std::string(name)].insert(importer.name + "@" + importer.version);
    }
    for (const auto& [name, found] : importers)
        out[name] = {installed->snapshot(hoisted.at(name)).version, {found.begin(), found.end()}};
    return out;
}

}  // namespace qk::audit
