// nx.json's "qk" section: qk's own settings beside Nx's: "remoteCache", the server a workspace shares its
// tasks' results through (docs/remote-cache.md), "inputsNeverReadAfterRuns" and "sandbox": {"network"},
// the network of targets that declare none (docs/sandbox.md). Nx
// ignores keys it does not know, so the section lives in the file both read.
#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_validate.hpp"

namespace qk::workspace::detail {

namespace {

constexpr std::string_view kSection = "qk.remoteCache";

Status expect_one_of(const Json* v, std::string_view file, std::string_view key,
                     std::initializer_list<std::string_view> allowed, std::string_view expected)
{
    if (!v)
        return {};
    if (v->is_string())
        for (std::string_view a : allowed)
            if (v->as_string() == a)
                return {};
    return shape_error(file, *v, fmt::format("{}.{}", kSection, key), expected);
}

// "sandbox": { "network": ... }: the workspace's defaults for what a target's "qk:sandbox" leaves out.
Status validate_sandbox_section(const Json& sandbox, std::string_view file)
{
    if (!sandbox.is_object())
        return shape_error(file, sandbox, "qk.sandbox", "an object, such as {\"network\": false}");
    for (const auto& [key, value] : sandbox.as_object()) {
        if (key != "network")
            return error(fmt::format("{}:{}:{}: qk.sandbox has no setting \"{}\"; it takes network (the rest of "
                                     "\"qk:sandbox\" is a target's own)",
                                     file, value.line(), value.column(), key));
        QK_TRY_STATUS(validate_network(value, file, "qk.sandbox.network"));
    }
    return {};
}

}  // namespace

Status validate_qk_section(const Json& nx, std::string_view file)
{
    const Json* qk = nx.find("qk");
    if (!qk)
        return {};
    if (!qk->is_object())
        return shape_error(file, *qk, "qk", "an object, such as {\"remoteCache\": {\"url\": \"https://...\"}}");
    for (const auto& [key, value] : qk->as_object()) {
        if (key == "inputsNeverReadAfterRuns") {
            if (value.kind() != Json::Kind::number || value.as_number() < 1 || value.as_number() > 1e6 ||
                value.as_number() != static_cast<double>(static_cast<unsigned>(value.as_number())))
                return shape_error(file, value, "qk.inputsNeverReadAfterRuns", "a whole number of runs, 1 or more");
        } else if (key == "sandbox") {
            QK_TRY_STATUS(validate_sandbox_section(value, file));
        } else if (key != "remoteCache") {
            return error(fmt::format("{}:{}:{}: qk has no setting \"{}\"; it takes remoteCache, sandbox and "
                                     "inputsNeverReadAfterRuns",
                                     file, value.line(), value.column(), key));
        }
    }
    const Json* remote = qk->find("remoteCache");
    if (!remote)
        return {};
    if (!remote->is_object())
        return shape_error(file, *remote, kSection, "an object: url, protocol, team, readOnly, upload, uploadNetwork, trust");
    for (const auto& [key, value] : remote->as_object()) {
        if (key == "token" || key == "signatureKey") {
            // A committed file is read by everyone who can read the repository, and by every task.
            std::string_view variable = key == "token" ? "QK_REMOTE_CACHE_TOKEN" : "QK_REMOTE_CACHE_SIGNATURE_KEY";
            return error(fmt::format("{}:{}:{}: {}.{} does not belong in a file that is committed; remove it and "
                                     "set {} in the CI's secrets",
                                     file, value.line(), value.column(), kSection, key, variable));
        }
        if (key == "url" || key == "team" || key == "protocol") {  // protocol: its names are src/remote's
            if (!value.is_string() || value.as_string().empty())
                return shape_error(file, value, fmt::format("{}.{}", kSection, key), "a non-empty string");
        } else if (key == "readOnly") {
            if (!value.is_bool())
                return shape_error(file, value, fmt::format("{}.readOnly", kSection), "true or false");
        } else if (key == "uploadNetwork") {
            if (!value.is_bool())
                return shape_error(file, value, fmt::format("{}.uploadNetwork", kSection),
                                   "true or false (false keeps the results of tasks that declare their network, "
                                   "\"qk:sandbox\": {\"network\": true or a list}, from the remote cache)");
        } else if (key != "upload" && key != "trust") {
            return error(fmt::format("{}:{}:{}: {} has no setting \"{}\"; it takes url, protocol, team, readOnly, "
                                     "upload, uploadNetwork and trust",
                                     file, value.line(), value.column(), kSection, key));
        }
    }
    QK_TRY_STATUS(expect_one_of(remote->find("upload"), file, "upload", {"verified", "any"},
                                "\"verified\" (what enforce held or a clean audit saw) or \"any\""));
    QK_TRY_STATUS(expect_one_of(remote->find("trust"), file, "trust", {"verified", "any"},
                                "\"verified\" (restore only verified results) or \"any\""));
    return {};
}

RemoteCacheConfig read_remote_cache_config(const Json& nx, const FileOf& file_of)
{
    RemoteCacheConfig config;
    const Json* qk = nx.find("qk");
    const Json* remote = qk ? qk->find("remoteCache") : nullptr;
    if (!remote)
        return config;
    auto text = [&](const char* key) {
        const Json* v = remote->find(key);
        return v ? v->as_string() : std::string();
    };
    auto at = [&](const char* key) {
        const Json* v = remote->find(key);
        return v ? fmt::format("{}:{}:{}", file_of(key), v->line(), v->column()) : std::string();
    };
    config.url = text("url");
    config.url_at = at("url");
    config.protocol = text("protocol");
    config.protocol_at = at("protocol");
    config.team = text("team");
    config.upload = text("upload");
    config.trust = text("trust");
    if (const Json* ro = remote->find("readOnly"))
        config.read_only = ro->as_bool();
    if (const Json* network = remote->find("uploadNetwork"))
        config.upload_network = network->as_bool();
    return config;
}

NetworkDeclaration read_workspace_network(const Json& nx)
{
    const Json* qk = nx.find("qk");
    const Json* sandbox = qk ? qk->find("sandbox") : nullptr;
    return read_network(sandbox ? sandbox->find("network") : nullptr, "workspace");
}

unsigned read_inputs_never_read_after_runs(const Json& nx, unsigned otherwise)
{
    const Json* qk = nx.find("qk");
    const Json* runs = qk ? qk->find("inputsNeverReadAfterRuns") : nullptr;
    return runs ? static_cast<unsigned>(runs->as_number()) : otherwise;
}

}  // namespace qk::workspace::detail
