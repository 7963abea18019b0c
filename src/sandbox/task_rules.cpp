#include "qk/sandbox/task_rules.hpp"

#include <fmt/core.h>

#include "qk/key/outputs.hpp"

namespace qk::sandbox {

Result<rules::Rules> task_rules(key::Session& session, std::size_t i, const std::vector<std::string>& scratch,
                                std::shared_ptr<const rules::InstalledPackages> installed)
{
    const workspace::Task& t = session.tasks().tasks()[i];
    rules::TaskDeclarations d;
    d.workspace = &session.workspace();
    d.graph = &session.graph();
    d.files = &session.files();
    if (!session.keys().computed(i))
        return error(fmt::format("{}: its key has not been computed", t.id));
    // Every file the key holds, its dependencies' through `^` inputs included: what it may read.
    QK_TRY(expanded, session.keys().expanded(i));
    d.key = std::make_shared<const key::TaskKey>(std::move(*expanded));
    d.project = t.project;
    d.target = t.target;
    d.scratch = scratch;
    d.installed = std::move(installed);
    for (std::size_t dep : session.tasks().transitive_deps(i))
        if (const key::TaskKey* k = session.keys().computed(dep)) {
            auto outputs = session.compiled_outputs(dep);
            if (!outputs)
                return error(fmt::format("{}: the outputs of {}: {}", t.id, session.tasks().tasks()[dep].id,
                                         outputs.error().message));
            d.dependency_outputs.push_back({session.tasks().tasks()[dep].id, std::move(*outputs)});
            d.dependency_packages.push_back(k->packages.closure);
        }
    // Left out of the run (--exclude-task-dependencies), they still name the outputs it may read: the
    // ones in place from an earlier run.
    for (const workspace::ExcludedTask& x : t.excluded_deps) {
        auto outputs = key::resolve_outputs(session.workspace().projects()[x.project], *x.target, x.configuration);
        if (!outputs)
            return error(fmt::format("{}: the outputs of {}, which it depends on: {}", t.id, x.id,
                                     outputs.error().message));
        auto set = key::OutputSet::compile(outputs->paths);
        if (!set)
            return error(fmt::format("{}: the outputs of {}: {}", t.id, x.id, set.error().message));
        d.dependency_outputs.push_back({x.id, std::make_shared<const key::OutputSet>(std::move(*set))});
    }
    return rules::Rules::build(d);
}

}  // namespace qk::sandbox
