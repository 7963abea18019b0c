// Rules::grants: what enforce hands Landlock, walked from the same compiled declarations the audit
// judges by (the spec's walk): globs walked from the directory their literal parts name; one ending in
// /** allows each directory it names whole; any other glob, or a set with a negation, the files it
// matches one by one; never entering .git, .qk or node_modules, and never allowing whole a directory
// holding one of them; links left out.

#include <fcntl.h>

#include <algorithm>

#include "path_kinds.hpp"
#include "qk/util/path_within.hpp"
#include "qk/rules/held_paths.hpp"
#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"
#include "rules_data.hpp"
#include "tree_walk.hpp"

namespace qk::rules {
namespace {

// Where a walk may grant: the whole workspace, or one project's own files (a dependency's, for
// ignoreReads' "^" globs), the projects nested in it left out, as the audit leaves them out: a file
// there is that project's (Rules::Data::project_of). A directory a nested project lies beneath is not
// allowed whole, as one holding .git is not: what lies beside the project is.
struct Scope {
    const Rules::Data* d = nullptr;  // null: the whole workspace
    std::size_t project = 0;
    const PathSet* holding = nullptr;  // every directory some project's root lies strictly beneath
};

class Granter {
public:
    Granter(int root_fd, std::vector<Grant>& out) : root_fd_(root_fd), out_(out) {}

    // What the following calls may grant; a default Scope for the whole workspace.
    void scope(Scope scope) { scope_ = scope; }

    void add(std::string path, Grant::Access access, bool directory, PathClass why)
    {
        out_.push_back({std::move(path), access, directory, why});
    }

    // A path named whole: allowed as it stands now (a file, or a directory with all beneath it, unless
    // it holds .git, .qk or node_modules: then what lies beside those).
    void path(const std::string& rel, Grant::Access access, PathClass why)
    {
        if (outside_scope(rel))
            return;
        char kind = kind_without_links(root_fd_, rel);
        if (kind == 'd')
            directory(rel, access, why);
        else if (kind == 'f')
            add(rel, access, false, why);
    }

    void directory(const std::string& rel, Grant::Access access, PathClass why)
    {
        walk(rel, {[&](std::string_view dir, bool special) {
                       if (special)
                           return WalkStep::descend;
                       add(std::string(dir), access, true, why);
                       return WalkStep::skip;
                   },
                   [&](std::string_view file) { add(std::string(file), access, false, why); }});
    }

    // The patterns of one set, compiled in `set` (which also holds the negations).
    template <class Set>
    void patterns(const std::vector<std::string>& written, const Set& set, Grant::Access access, PathClass why)
    {
        const bool negated = std::any_of(written.begin(), written.end(), [](const auto& p) { return p.starts_with('!'); });
        for (const std::string& p : written) {
            if (p.starts_with('!'))
                continue;
            auto glob = workspace::Glob::compile(p);
            if (!glob)
                continue;  // the set compiled it: cannot happen
            if (glob->names_path()) {
                if (!negated)
                    path(std::string(glob->literal_prefix()), access, why);
                else
                    files_matching(std::string(glob->literal_prefix()), set, access, why);
                continue;
            }
            if (!negated && p.ends_with("/**")) {
                auto dirs = workspace::Glob::compile(std::string_view(p).substr(0, p.size() - 3));
                if (dirs) {
                    directories_matching(std::string(dirs->literal_prefix()), *dirs, access, why);
                    continue;
                }
            }
            files_matching(std::string(glob->literal_prefix()), set, access, why);
        }
    }

private:
    template <class Set>
    void files_matching(const std::string& start, const Set& set, Grant::Access access, PathClass why)
    {
        walk(start, {[&](std::string_view dir, bool) {
                         return dir.empty() || set.may_match_under(dir) || set.matches(dir) ? WalkStep::descend
                                                                                             : WalkStep::skip;
                     },
                     [&](std::string_view file) {
                         if (set.matches(file))
                             add(std::string(file), access, false, why);
                     }});
    }

    void directories_matching(const std::string& start, const workspace::Glob& dirs, Grant::Access access,
                              PathClass why)
    {
        walk(start, {[&](std::string_view dir, bool special) {
                         if (!dir.empty() && dirs.matches(dir)) {
                             if (!special) {
                                 add(std::string(dir), access, true, why);
                                 return WalkStep::skip;
                             }
                             // Beside .git, .qk, node_modules or a nested project: what lies there, whole.
                             directory_contents(std::string(dir), access, why);
                             return WalkStep::skip;
                         }
                         return dir.empty() || dirs.may_match_under(dir) ? WalkStep::descend : WalkStep::skip;
                     },
                     [](std::string_view) {}});
    }

    void directory_contents(const std::string& rel, Grant::Access access, PathClass why)
    {
        bool first = true;
        walk(rel, {[&](std::string_view dir, bool special) {
                       if (first) {
                           first = false;
                           return WalkStep::descend;
                       }
                       if (special)
                           return WalkStep::descend;
                       add(std::string(dir), access, true, why);
                       return WalkStep::skip;
                   },
                   [&](std::string_view file) { add(std::string(file), access, false, why); }});
    }

    // Whether `rel` (a file or directory) belongs to a project other than the scope's.
    bool outside_scope(std::string_view rel) const
    {
        if (!scope_.d)
            return false;
        auto owner = scope_.d->project_holding(rel);
        return !owner || *owner != scope_.project;
    }

    // walk_tree within the scope: a start outside it visits nothing, a nested project's root is not
    // entered, and a directory one lies beneath counts as holding .git would (not allowed whole).
    void walk(std::string_view start, const TreeVisitor& visit)
    {
        if (!scope_.d) {
            walk_tree(root_fd_, start, visit);
            return;
        }
        if (outside_scope(start))
            return;
        walk_tree(root_fd_, start, {[&](std::string_view dir, bool special) {
                                        if (auto p = scope_.d->ws->project_at(dir); p && *p != scope_.project)
                                            return WalkStep::skip;  // a nested project: its own
                                        return visit.dir(dir, special || scope_.holding->contains(dir));
                                    },
                                    visit.file});
    }

    int root_fd_;
    std::vector<Grant>& out_;
    Scope scope_;
};

PathClass class_of_open_tree(std::string_view path)
{
    switch (special_tree(path)) {
    case SpecialDir::git: return PathClass::git;
    case SpecialDir::qk: return PathClass::qk_state;
    case SpecialDir::node_modules: return PathClass::node_modules;
    case SpecialDir::none: break;
    }
    return PathClass::scratch;
}

// Paths ordered component by component ('/' before any other byte), so that what lies under a
// directory follows it at once ("a", "a/x", "a-b", not "a", "a-b", "a/x").
bool component_less(std::string_view a, std::string_view b)
{
    std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] == b[i])
            continue;
        if (a[i] == '/')
            return true;
        if (b[i] == '/')
            return false;
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
}

// ignoreReads' "^" globs, each matched from the root of a project the task depends on.
std::vector<std::string> from_project_root(const std::vector<std::string>& patterns, const std::string& root)
{
    std::vector<std::string> out;
    for (const std::string& p : patterns) {
        bool neg = p.starts_with('!');
        std::string body = neg ? p.substr(1) : p;
        out.push_back((neg ? "!" : "") + (root == "." ? body : root + "/" + body));
    }
    return out;
}

// Every directory some project's root lies strictly beneath ("" for any project but a root one).
PathSet project_ancestors(const workspace::Workspace& ws)
{
    PathSet out;
    for (const workspace::Project& p : ws.projects())
        if (p.root != ".")
            for (std::string_view dir = dirname_of(p.root);; dir = dirname_of(dir)) {
                if (!out.emplace(dir).second)
                    break;  // its ancestors are in already
                if (dir.empty())
                    break;
            }
    return out;
}

}  // namespace

std::vector<std::string> Rules::held_trees() const
{
    std::vector<std::string> out;
    if (d_->files)
        for (const std::string& e : d_->files->special_entries())
            if (special_tree(e) != SpecialDir::qk)
                out.push_back(e);
    return out;
}

std::vector<std::string> Rules::pass_through() const
{
    const Data& d = *d_;
    std::vector<std::string> out{".qk"};
    UniqueFd root(::open(d.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (const std::string& tree : held_trees()) {
        std::vector<std::string> open = writable_entries(root.get(), tree);
        out.insert(out.end(), open.begin(), open.end());
    }
    out.insert(out.end(), d.scratch.begin(), d.scratch.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> Rules::Data::dotenv_files() const
{
    // Tracked ones anywhere, and those beside the workspace's and the project's configuration, where
    // tools load them from (git-ignored, as they usually are).
    std::vector<std::string> out;
    if (files)
        for (const std::string& f : files->files())
            if (is_dotenv(basename_of(f)))
                out.push_back(f);
    const std::string& project_root = ws->projects()[project].root;
    for (std::string dir : {std::string(), project_root == "." ? std::string() : project_root}) {
        UniqueFd fd(::open((root + "/" + dir).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd.valid())
            continue;
        walk_tree(fd.get(), "", {[](std::string_view rel, bool) { return rel.empty() ? WalkStep::descend : WalkStep::skip; },
                                 [&](std::string_view file) {
                                     if (is_dotenv(file))
                                         out.push_back(dir.empty() ? std::string(file) : dir + "/" + std::string(file));
                                 }});
    }
    return out;
}

std::vector<Grant> Rules::grants() const
{
    const Data& d = *d_;
    std::vector<Grant> out;
    UniqueFd root(::open(d.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
        return out;
    Granter g(root.get(), out);
    using A = Grant::Access;

    // Where the task may read and write: its outputs, warm paths and scratch directories, and what qk
    // and the sandbox keep open everywhere (.git, .qk, every node_modules).
    g.patterns(d.outputs->patterns(), *d.outputs, A::read_write, PathClass::output);
    if (d.warm)
        g.patterns(d.warm->patterns(), *d.warm, A::read_write, PathClass::warm);
    for (const std::string& p : held_trees())  // whole, never walked: node_modules holds more node_modules
        g.add(p, A::read, true, class_of_open_tree(p));
    for (const std::string& p : pass_through())  // scratch directories among them
        g.path(p, A::read_write, class_of_open_tree(p));

    // Inputs: the outermost directories every tracked file of which is an input, then the files apart.
    for (const std::string& dir : d.whole_input_dirs)
        g.add(dir, A::read, true, PathClass::input);
    if (d.files)
        for (std::uint32_t f : d.input_files)
            if (const std::string& path = d.files->files()[f]; !d.under_whole_input_dir(path))
                g.path(path, A::read, PathClass::input);
    for (const std::string& p : d.literal_inputs)
        if (!d.files || d.files->range_under(p).first == d.files->range_under(p).second)
            g.path(p, A::read, PathClass::input);

    for (const std::string& p : d.linked_dirs)
        g.path(p, A::read, PathClass::input);
    for (const std::string& p : d.linked_files)
        g.path(p, A::read, PathClass::input);
    for (const std::string& p : d.always)
        g.path(p, A::read, PathClass::always);
    for (const std::string& p : d.json_files)
        g.path(p, A::read, PathClass::json_input);  // a link among them gets no rule: its target does
    for (const std::string& p : d.json_targets)
        g.path(p, A::read, PathClass::json_input);
    for (const std::string& p : d.dependency_output_files)
        g.path(p, A::read, PathClass::dependency_output);
    for (const auto& dep : d.dependency_outputs)
        g.patterns(dep.outputs->patterns(), *dep.outputs, A::read, PathClass::dependency_output);
    if (d.ignore_reads.any_positive)
        g.patterns(d.ignore_reads.patterns, d.ignore_reads.set, A::read, PathClass::ignored_read);
    if (d.ignore_dependency_reads.any_positive) {
        const PathSet holding = project_ancestors(*d.ws);
        for (std::size_t p = 0; p < d.dependency_project.size(); ++p)
            if (d.dependency_project[p]) {
                auto patterns = from_project_root(d.ignore_dependency_reads.patterns, d.ws->projects()[p].root);
                g.scope({&d, p, &holding});
                if (auto set = workspace::GlobSet::compile(patterns))
                    g.patterns(patterns, *set, A::read, PathClass::ignored_read);
            }
        g.scope({});
    }
    for (const std::string& p : d.covered_manifests)
        g.path(p, A::read, PathClass::covered_manifest);
    for (const std::string& p : d.dotenv_files())
        g.path(p, A::read, PathClass::dotenv);

    std::sort(out.begin(), out.end(), [](const Grant& a, const Grant& b) {
        return a.path != b.path ? component_less(a.path, b.path) : a.access > b.access;
    });
    // One grant a path, the widest; nothing inside a directory already granted as widely. What lies
    // under a directory follows it, so the directories granted around a path are a stack.
    std::vector<Grant> kept;
    std::vector<std::size_t> around;  // indices into kept
    for (const Grant& grant : out) {
        if (!kept.empty() && kept.back().path == grant.path)
            continue;
        while (!around.empty() && !qk::is_within(grant.path, kept[around.back()].path))
            around.pop_back();
        if (std::any_of(around.begin(), around.end(), [&](std::size_t dir) { return kept[dir].access >= grant.access; }))
            continue;
        kept.push_back(grant);
        if (grant.directory)
            around.push_back(kept.size() - 1);
    }
    return kept;
}

}  // namespace qk::rules
