#include "qk/key/input_use.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

#include <fmt/format.h>

#include "qk/key/hash.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"

namespace qk::key {

namespace {

constexpr std::string_view kHeader = "qk input use 1\t";

std::optional<std::uint32_t> number(std::string_view text)
{
    std::uint32_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return n;
}

}  // namespace

std::vector<std::string> never_read(const std::vector<InputUse>& counts, std::uint32_t runs)
{
    std::vector<std::string> out;
    for (const InputUse& u : counts)
        if (u.read == 0 && u.runs >= runs)
            out.push_back(u.path);
    return out;
}

InputUseStore InputUseStore::open(const std::filesystem::path& cache_dir)
{
    return InputUseStore(cache_dir / "input-use");
}

std::filesystem::path InputUseStore::file(const std::string& task) const
{
    // Task ids hold ':' and '/' (scoped packages): named by their hash, as TaskHistory's are.
    return dir_ / (hash_bytes(task).hex() + ".txt");
}

// One file per line: runs, tab, reads, tab, path (a path may hold anything but a newline).
std::vector<InputUse> InputUseStore::load(const std::string& task) const
{
    auto text = read_file(file(task).string());
    std::string first = std::string(kHeader) + task + "\n";
    if (!text || !text->starts_with(first))
        return {};
    std::vector<InputUse> out;
    std::string_view rest = std::string_view(*text).substr(first.size());
    while (!rest.empty()) {
        auto end = rest.find('\n');
        if (end == std::string_view::npos)
            return {};
        std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        auto t1 = line.find('\t');
        auto t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
        if (t2 == std::string_view::npos)
            return {};
        auto runs = number(line.substr(0, t1));
        auto read = number(line.substr(t1 + 1, t2 - t1 - 1));
        if (!runs || !read || *read > *runs)
            return {};
        out.push_back({std::string(line.substr(t2 + 1)), *runs, *read});
    }
    if (!std::is_sorted(out.begin(), out.end(), [](const InputUse& a, const InputUse& b) { return a.path < b.path; }))
        return {};
    return out;
}

Result<std::vector<InputUse>> InputUseStore::add_run(const std::string& task, const std::vector<std::string>& declared,
                                                     const std::function<bool(std::string_view)>& was_read)
{
    const std::vector<InputUse> before = load(task);
    std::vector<InputUse> after;
    after.reserve(declared.size());
    auto old = before.begin();
    for (const std::string& path : declared) {
        while (old != before.end() && old->path < path)
            ++old;
        InputUse u{path, 0, 0};
        if (old != before.end() && old->path == path)
            u = *old;
        ++u.runs;
        if (was_read(path))
            ++u.read;
        after.push_back(std::move(u));
    }
    std::string text = std::string(kHeader) + task + "\n";
    for (const InputUse& u : after)
        if (u.path.find('\n') == std::string::npos)  // cannot be told apart from the next line; dropped
            text += fmt::format("{}\t{}\t{}\n", u.runs, u.read, u.path);
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec)
        return error(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
    QK_TRY_STATUS(write_file_atomically(file(task).string(), text, {.durable = false}));
    return after;
}

}  // namespace qk::key
