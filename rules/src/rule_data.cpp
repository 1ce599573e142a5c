#include "mdadmit/rules/rule_data.hpp"

#include <algorithm>
#include <boost/json/value.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "data_reader.hpp"
#include "field_path.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::rules {

namespace {

namespace json = boost::json;

constexpr int supported_version = 3;

using data_file::DataError;
using data_file::parse_engine;
using data_file::parse_kind;
using data_file::parse_platform;
using R = data_file::DataReader;

RuleInfo parse_rule(const json::value& value, const FieldPath& path) {
    const json::object& object = R::object(value, path);
    RuleInfo rule;
    rule.id = R::string(R::field(object, "id", path), path.member("id"));
    const std::string severity =
        R::string(R::field(object, "severity", path), path.member("severity"));
    if (severity != "deny" && severity != "warn") {
        throw DataError{path.member("severity").text(),
                        "expected deny or warn, got \"" + severity + "\""};
    }
    rule.severity = severity == "deny" ? Severity::deny : Severity::warn;
    rule.section = R::string(R::field(object, "section", path), path.member("section"));
    rule.meaning = R::string(R::field(object, "meaning", path), path.member("meaning"));
    if (const auto* action = object.if_contains("action")) {
        const std::string text = R::string(*action, path.member("action"));
        rule.action = parse_action(text);
        if (!rule.action) {
            throw DataError{path.member("action").text(),
                            "expected deny, warn or off, got \"" + text + "\""};
        }
    }
    return rule;
}

RouterData parse_router(const json::value& value, const FieldPath& path) {
    const json::object& object = R::object(value, path);
    RouterData router;
    router.name = R::string(R::field(object, "name", path), path.member("name"));
    router.engines = R::each<EngineKind>(R::field(object, "engines", path), path.member("engines"),
                                         parse_engine);
    router.owned_flags =
        R::strings(R::field(object, "ownedFlags", path), path.member("ownedFlags"));
    const json::value& policies = R::field(object, "policyValues", path);
    if (policies.is_null()) {
        const FieldPath profile_path = path.member("fixedProfile");
        router.fixed_profile = R::string(R::field(object, "fixedProfile", path), profile_path);
    } else {
        router.policy_values = R::strings(policies, path.member("policyValues"));
    }
    const json::value& threshold = R::field(object, "disaggregationThreshold", path);
    if (!threshold.is_bool()) {
        throw DataError{path.member("disaggregationThreshold").text(), "expected true or false"};
    }
    router.disaggregation_threshold = threshold.get_bool();
    const FieldPath features_path = path.member("features");
    for (const std::string& feature :
         R::strings(R::field(object, "features", path), features_path)) {
        if (feature == "pd-disaggregation") {
            router.renders_pd_disaggregation = true;
        } else if (feature == "dp-aware") {
            router.renders_dp_aware = true;
        } else {
            throw DataError{features_path.text(),
                            "expected pd-disaggregation or dp-aware, got \"" + feature + "\""};
        }
    }
    return router;
}

ReservedPorts parse_reserved(const json::value& value, const FieldPath& path) {
    const json::object& object = R::object(value, path);
    ReservedPorts entry;
    entry.ports = R::each<std::int64_t>(
        R::field(object, "ports", path), path.member("ports"),
        [](const json::value& v, const FieldPath& p) { return R::integer(v, p, 1, 65535); });
    entry.engine = parse_engine(R::field(object, "engine", path), path.member("engine"));
    if (const auto* router = object.if_contains("router")) {
        entry.router = R::string(*router, path.member("router"));
    }
    entry.kinds =
        R::each<RoleKind>(R::field(object, "kinds", path), path.member("kinds"), parse_kind);
    if (const auto* when = object.if_contains("when")) {
        const std::string text = R::string(*when, path.member("when"));
        if (text == "pd-pair-with-router") {
            entry.when = ReservedWhen::pd_pair_with_router;
        } else if (text == "pd-pair-with-router-or-kv-cache") {
            entry.when = ReservedWhen::pd_pair_with_router_or_kv_cache;
        } else {
            throw DataError{
                path.member("when").text(),
                "expected pd-pair-with-router or pd-pair-with-router-or-kv-cache, got \"" + text +
                    "\""};
        }
    }
    entry.reason = R::string(R::field(object, "reason", path), path.member("reason"));
    return entry;
}

ServingMode parse_mode(std::string_view name, const FieldPath& path) {
    for (ServingMode mode :
         {ServingMode::internal_server, ServingMode::external_dp, ServingMode::elastic_ep,
          ServingMode::prefill, ServingMode::decode, ServingMode::encode}) {
        if (name == to_string(mode)) {
            return mode;
        }
    }
    throw DataError{path.text(), "unknown serving mode \"" + std::string(name) + "\""};
}

std::map<ServingMode, CandidateRule> parse_candidates(const json::value& value,
                                                      const FieldPath& path) {
    std::map<ServingMode, CandidateRule> out;
    for (const auto& [key, item] : R::object(value, path)) {
        const FieldPath item_path = path.member(key);
        const std::string rule = R::string(item, item_path);
        CandidateRule parsed = CandidateRule::none;
        if (rule == "first-member") {
            parsed = CandidateRule::first_member;
        } else if (rule == "every-member") {
            parsed = CandidateRule::every_member;
        } else if (rule != "none") {
            throw DataError{item_path.text(), "expected none, first-member or every-member"};
        }
        out[parse_mode(key, item_path)] = parsed;
    }
    if (out.size() != 6) {
        throw DataError{path.text(), "every serving mode needs a candidate rule"};
    }
    return out;
}

RenderedFlag parse_rendered(const json::value& value, const FieldPath& path) {
    const json::object& object = R::object(value, path);
    RenderedFlag out;
    const std::string target = R::string(R::field(object, "target", path), path.member("target"));
    if (target == "router") {
        out.target = FlagTarget::router;
    } else if (target == "engine") {
        out.target = FlagTarget::engine;
    } else if (target == "routing-sidecar") {
        out.target = FlagTarget::routing_sidecar;
    } else {
        throw DataError{path.member("target").text(), "expected router, engine or routing-sidecar"};
    }
    if (const auto* router = object.if_contains("router")) {
        out.router = R::string(*router, path.member("router"));
    }
    if (const auto* engine = object.if_contains("engine")) {
        out.engine = parse_engine(*engine, path.member("engine"));
    }
    if (const auto* kind = object.if_contains("kind")) {
        out.kind = parse_kind(*kind, path.member("kind"));
    }
    const std::string when = R::string(R::field(object, "when", path), path.member("when"));
    if (when == "encode-role") {
        out.when = RenderWhen::encode_role;
    } else if (when == "attention-dp-without-pd-pair") {
        out.when = RenderWhen::attention_dp_without_pd_pair;
    } else {
        throw DataError{path.member("when").text(),
                        "expected encode-role or attention-dp-without-pd-pair"};
    }
    out.flag = R::string(R::field(object, "flag", path), path.member("flag"));
    if (const auto* fixed = object.if_contains("value")) {
        out.value = R::string(*fixed, path.member("value"));
    }
    if (const auto* by_platform = object.if_contains("valueByPlatform")) {
        const FieldPath by_path = path.member("valueByPlatform");
        for (const auto& [platform, item] : R::object(*by_platform, by_path)) {
            out.value_by_platform[parse_platform(json::string(platform),
                                                 by_path.member(platform))] =
                R::string(item, by_path.member(platform));
        }
    }
    if (const auto* excludes = object.if_contains("excludes")) {
        out.excludes = R::strings(*excludes, path.member("excludes"));
    }
    if (const auto* separate = object.if_contains("separateValue")) {
        if (!separate->is_bool()) {
            throw DataError{path.member("separateValue").text(), "expected true or false"};
        }
        out.separate_value = separate->get_bool();
    }
    out.reason = R::string(R::field(object, "reason", path), path.member("reason"));
    return out;
}

void check_consistency(const RuleData& data) {
    std::set<std::string> ids;
    for (std::size_t i = 0; i < data.rules.size(); ++i) {
        if (!ids.insert(data.rules[i].id).second) {
            throw DataError{"rules[" + std::to_string(i) + "].id",
                            "duplicate rule id \"" + data.rules[i].id + "\""};
        }
    }
    std::set<std::string> routers;
    for (std::size_t i = 0; i < data.routers.size(); ++i) {
        if (!routers.insert(data.routers[i].name).second) {
            throw DataError{"routers[" + std::to_string(i) + "].name",
                            "duplicate router \"" + data.routers[i].name + "\""};
        }
    }
    const auto known_router = [&](const std::string& name, const std::string& path) {
        if (routers.count(name) == 0) {
            throw DataError{path, "unknown router \"" + name + "\""};
        }
    };
    for (std::size_t i = 0; i < data.encode_matrix.size(); ++i) {
        known_router(data.encode_matrix[i].router,
                     "encodeMatrix[" + std::to_string(i) + "].router");
    }
    for (std::size_t i = 0; i < data.rendered_flags.size(); ++i) {
        if (data.rendered_flags[i].router) {
            known_router(*data.rendered_flags[i].router,
                         "renderedFlags[" + std::to_string(i) + "].router");
        }
    }
    for (std::size_t i = 0; i < data.reserved_ports.size(); ++i) {
        if (data.reserved_ports[i].router) {
            known_router(*data.reserved_ports[i].router,
                         "reservedPorts[" + std::to_string(i) + "].router");
        }
    }
    known_router(data.preferred_router_vllm, "preferredRouter.vLLM");
    known_router(data.preferred_router_sglang, "preferredRouter.SGLang");
}

RuleData parse(const json::value& root_value) {
    const FieldPath root;
    const json::object& root_object = R::object(root_value, root);
    RuleData data;
    data.version = static_cast<int>(
        R::integer(R::field(root_object, "version", root), root.member("version"), 0, 1000));
    if (data.version != supported_version) {
        throw DataError{"version", "unsupported version " + std::to_string(data.version) +
                                       "; this build reads version " +
                                       std::to_string(supported_version)};
    }
    data.default_serving_port = R::integer(R::field(root_object, "defaultServingPort", root),
                                           root.member("defaultServingPort"), 1, 65535);
    data.decoder_backend_port = R::integer(R::field(root_object, "decoderBackendPort", root),
                                           root.member("decoderBackendPort"), 1, 65535);
    data.rules =
        R::each<RuleInfo>(R::field(root_object, "rules", root), root.member("rules"), parse_rule);
    data.policy_flags =
        R::strings(R::field(root_object, "policyFlags", root), root.member("policyFlags"));
    data.routers = R::each<RouterData>(R::field(root_object, "routers", root),
                                       root.member("routers"), parse_router);
    const FieldPath preferred_path = root.member("preferredRouter");
    const json::object& preferred =
        R::object(R::field(root_object, "preferredRouter", root), preferred_path);
    data.preferred_router_vllm =
        R::string(R::field(preferred, "vLLM", preferred_path), preferred_path.member("vLLM"));
    data.preferred_router_sglang =
        R::string(R::field(preferred, "SGLang", preferred_path), preferred_path.member("SGLang"));
    data.encode_matrix = R::each<EncodeRow>(
        R::field(root_object, "encodeMatrix", root), root.member("encodeMatrix"),
        [](const json::value& v, const FieldPath& p) {
            const json::object& row = R::object(v, p);
            return EncodeRow{R::string(R::field(row, "router", p), p.member("router")),
                             parse_engine(R::field(row, "engine", p), p.member("engine")),
                             R::each<Platform>(R::field(row, "platforms", p), p.member("platforms"),
                                               parse_platform)};
        });
    data.reserved_ports = R::each<ReservedPorts>(R::field(root_object, "reservedPorts", root),
                                                 root.member("reservedPorts"), parse_reserved);
    const FieldPath image_path = root.member("dpAwareImage");
    const json::object& image = R::object(R::field(root_object, "dpAwareImage", root), image_path);
    data.dp_aware_repository =
        R::string(R::field(image, "repository", image_path), image_path.member("repository"));
    data.dp_aware_minimum_tag =
        R::string(R::field(image, "minimumTag", image_path), image_path.member("minimumTag"));
    data.ssl_flags = R::strings(R::field(root_object, "sslFlags", root), root.member("sslFlags"));
    data.owned_env = data_file::parse_owned_env(R::field(root_object, "ownedEnv", root),
                                                root.member("ownedEnv"));
    data.settings = data_file::parse_settings(
        R::object(R::field(root_object, "settings", root), root.member("settings")),
        root.member("settings"), Settings{});
    data.candidates =
        parse_candidates(R::field(root_object, "candidates", root), root.member("candidates"));
    data.rendered_flags = R::each<RenderedFlag>(R::field(root_object, "renderedFlags", root),
                                                root.member("renderedFlags"), parse_rendered);
    data.owned_args = data_file::parse_owned_args(R::field(root_object, "ownedArgs", root),
                                                  root.member("ownedArgs"));
    data.flag_spellings = data_file::parse_flag_spellings(
        R::field(root_object, "flagSpellings", root), root.member("flagSpellings"));
    data.elastic_ep_owned_flags = R::strings(R::field(root_object, "elasticEpOwnedFlags", root),
                                             root.member("elasticEpOwnedFlags"));
    data.elastic_ep_owned_env = R::strings(R::field(root_object, "elasticEpOwnedEnv", root),
                                           root.member("elasticEpOwnedEnv"));
    data.artifact = data_file::parse_artifact(R::field(root_object, "artifactRef", root),
                                              root.member("artifactRef"));
    data.parallelism = data_file::parse_parallelism(R::field(root_object, "parallelism", root),
                                                    root.member("parallelism"));
    check_consistency(data);
    return data;
}

}  // namespace

bool RouterData::fronts(EngineKind engine) const {
    return std::find(engines.begin(), engines.end(), engine) != engines.end();
}

bool RouterData::owns(std::string_view flag) const {
    return std::find(owned_flags.begin(), owned_flags.end(), flag) != owned_flags.end();
}

const RuleInfo* RuleData::rule(std::string_view id) const {
    const auto it =
        std::find_if(rules.begin(), rules.end(), [&](const RuleInfo& r) { return r.id == id; });
    return it == rules.end() ? nullptr : &*it;
}

const RouterData* RuleData::router(std::string_view name) const {
    const auto it = std::find_if(routers.begin(), routers.end(),
                                 [&](const RouterData& r) { return r.name == name; });
    return it == routers.end() ? nullptr : &*it;
}

const std::string& RuleData::preferred_router(EngineKind engine) const {
    return engine == EngineKind::sglang ? preferred_router_sglang : preferred_router_vllm;
}

FlagSpelling RuleData::spelling(EngineKind engine) const {
    const auto it = flag_spellings.find(engine);
    return it == flag_spellings.end() ? FlagSpelling{} : it->second;
}

const ParallelTable* RuleData::parallel_table(EngineKind engine) const {
    const auto it = parallelism.find(engine);
    return it == parallelism.end() ? nullptr : &it->second;
}

Result<RuleData> with_settings(RuleData data, const json::object& overrides) {
    try {
        data.settings =
            data_file::parse_settings(overrides, FieldPath().member("settings"), data.settings);
    } catch (const DataError& e) {
        return Error{e.path + ": " + e.problem};
    }
    return data;
}

Result<RuleData> parse_rule_data(std::string_view json_text, std::string_view origin) {
    const std::string where = "rule data " + std::string(origin);
    auto parsed = parse_json(json_text);
    if (!parsed) {
        return Error{where + ": " + parsed.error().message};
    }
    try {
        return parse(parsed.value());
    } catch (const DataError& e) {
        return Error{where + ": " + (e.path.empty() ? std::string("(root)") : e.path) + ": " +
                     e.problem};
    }
}

Result<RuleData> load_rule_data_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{"rule data " + path + ": cannot open the file"};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_rule_data(text.str(), path);
}

RuleData embedded_rule_data() {
    auto data = parse_rule_data(embedded_rule_data_json(), "(built in)");
    // The built-in file is checked by the unit tests; failing here is a build defect.
    if (!data) {
        std::abort();
    }
    return std::move(data).value();
}

}  // namespace mdadmit::rules
