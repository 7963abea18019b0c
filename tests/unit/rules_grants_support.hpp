// What the cases on Rules::grants (enforce's walk) share: a workspace each case writes for itself,
// planned and keyed, whose tasks' rules it hands out; and a grant looked up by its path.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "test_support.hpp"

namespace qk::test {

// A pnpm workspace of packages/*, where a project's default input is all its files. The derived fixture
// writes its projects, then calls plan().
struct PlannedWorkspace {
    TempDir dir;
    std::unique_ptr<key::Session> session;

    explicit PlannedWorkspace(const std::string& prefix) : dir{prefix}
    {
        dir.write("nx.json", R"({ "namedInputs": { "default": ["{projectRoot}/**/*"] } })");
        dir.write("pnpm-workspace.yaml", "packages:\n  - packages/*\n");
        dir.write("package.json", R"({ "name": "root", "private": true })");
    }

    // Every task is keyed as well: its rules are built from what the key read.
    void plan(std::vector<std::string> targets)
    {
        auto s = key::Session::open(dir.path);
        REQUIRE(s);
        session = std::move(s).value();
        workspace::TaskRequest request;
        request.targets = std::move(targets);
        REQUIRE(session->plan(request));
        for (std::size_t i = 0; i < session->tasks().tasks().size(); ++i) {
            auto k = session->keys().key(i);
            INFO((k ? "" : k.error().message));
            REQUIRE(k);
        }
    }

    rules::Rules rules_of(const std::string& id, const std::vector<std::string>& scratch = {})
    {
        auto i = session->tasks().index(id);
        REQUIRE(i);
        auto r = sandbox::task_rules(*session, *i, scratch);
        INFO((r ? "" : r.error().message));
        REQUIRE(r);
        return std::move(r).value();
    }
    std::string abs(const std::string& rel) const { return (dir.path / rel).string(); }
};

// The grant naming `path` itself (not one holding it), or null.
inline const rules::Grant* find(const std::vector<rules::Grant>& grants, const std::string& path)
{
    auto it = std::find_if(grants.begin(), grants.end(), [&](const rules::Grant& g) { return g.path == path; });
    return it == grants.end() ? nullptr : &*it;
}

}  // namespace qk::test
