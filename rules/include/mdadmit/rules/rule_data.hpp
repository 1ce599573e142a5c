#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/arg_stream.hpp"
#include "mdadmit/rules/enforcement.hpp"
#include "mdadmit/rules/finding.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/platform.hpp"
#include "mdadmit/rules/result.hpp"
#include "mdadmit/rules/serving_mode.hpp"

namespace mdadmit::rules {

// The matrices of the rules, loaded from one versioned JSON file (rules/data/rules.json),
// so that a newer router or engine build can be admitted by replacing the file.

struct RuleInfo {
    std::string id;
    Severity severity;
    std::string section;
    std::string meaning;
    // What its findings do unless --enforce says otherwise; unset: as its severity says.
    std::optional<Action> action;
};

struct RouterData {
    std::string name;
    std::vector<EngineKind> engines;
    std::vector<std::string> owned_flags;
    // Empty optional: the router takes no policy flag at all (its profile is fixed).
    std::optional<std::vector<std::string>> policy_values;
    std::string fixed_profile;
    bool disaggregation_threshold = false;
    // What the router renders for its roles, named in the data file's `features`:
    // `pd-disaggregation` for a Prefill+Decode pair, `dp-aware` for attention-DP roles (one
    // worker registered per data-parallel rank).
    bool renders_pd_disaggregation = false;
    bool renders_dp_aware = false;

    bool fronts(EngineKind engine) const;
    bool owns(std::string_view flag) const;
};

struct EncodeRow {
    std::string router;
    EngineKind engine;
    std::vector<Platform> platforms;
};

// When a reserved-port entry applies beyond engine, router and kind.
enum class ReservedWhen { always, pd_pair_with_router, pd_pair_with_router_or_kv_cache };

struct ReservedPorts {
    std::vector<std::int64_t> ports;
    EngineKind engine;
    std::optional<std::string> router;  // only under this router
    std::vector<RoleKind> kinds;
    ReservedWhen when = ReservedWhen::always;
    std::string reason;
};

// Which members of a replica a router may discover, per serving mode.
enum class CandidateRule { none, first_member, every_member };

// Which container of a Pod an operator-owned flag belongs in.
enum class FlagTarget { router, engine, routing_sidecar };

std::string_view to_string(FlagTarget target);

// When the operator renders a flag.
enum class RenderWhen { encode_role, attention_dp_without_pd_pair };

// A flag the routing contract needs on a container. In values, "{encoder-url}" stands for the
// Encode role's Service URL.
struct RenderedFlag {
    FlagTarget target = FlagTarget::engine;
    std::optional<std::string> router;  // only under this router
    std::optional<EngineKind> engine;   // only for this engine
    std::optional<RoleKind> kind;       // only on roles of this kind
    RenderWhen when = RenderWhen::encode_role;
    std::string flag;
    std::string value;  // "" for a flag without a value
    std::map<Platform, std::string>
        value_by_platform;        // instead of value: by the Encode role's platform
    bool separate_value = false;  // `--flag value` rather than `--flag=value`
    // Flags that never run beside this one: a container that already carries one of them
    // does not get this flag.
    std::vector<std::string> excludes;
    std::string reason;
};

// How an engine's argument parser accepts a long flag beyond its exact spelling.
struct FlagSpelling {
    bool underscores = false;      // `--kv_transfer_config` is `--kv-transfer-config`
    bool dotted_members = false;   // `--kv-transfer-config.kv_role=x` sets one member of it
    bool unique_prefixes = false;  // `--kv-transfer` abbreviates `--kv-transfer-config`
};

// When the operator renders an engine flag itself.
enum class OwnedWhen { always, encode_role, kv_cache };

// Switches of the operator's that change what it admits, with the operator's defaults.
struct Settings {
    bool privileged_allowed = false;        // instance-privileged-allowed
    bool host_path_volume_allowed = false;  // instance-host-path-volume-allowed
    bool kv_cache_dtype_owned = true;       // model-deployment-kv-cache-dtype-owned

    // The setting of that data-file name; nullopt for a name that is not a setting.
    std::optional<bool> named(std::string_view name) const;
};

// An engine flag the operator renders on managed roles.
struct OwnedArg {
    std::string flag;
    std::optional<EngineKind> engine;  // every engine when absent
    std::optional<RoleKind> kind;      // only on roles of this kind
    OwnedWhen when = OwnedWhen::always;
    std::string setting;  // when set: owned only while this setting is on
    // The shortest abbreviation the engine's parser resolves to this flag alone; empty when
    // the engine takes no abbreviations of it.
    std::string shortest_prefix;
    std::string reason;
};

// Environment variable names owned for every engine and per engine.
struct OwnedEnv {
    std::vector<std::string> every_engine;
    std::map<EngineKind, std::vector<std::string>> per_engine;

    bool owns(EngineKind engine, std::string_view name) const;
};

// What the operator renders for a model served from spec.model.artifactRef: engine flags and
// environment on managed roles, and the paths it mounts the weights at on every role.
struct ArtifactOwned {
    std::vector<OwnedArg> args;
    OwnedEnv env;
    std::vector<std::string> mount_paths;
};

// What a parallel degree counts for in one member's width of accelerators.
enum class DegreeUse {
    checked,       // read and checked, adds nothing to the width
    width,         // multiplies the width
    data,          // the data-parallel size
    data_local,    // the local data-parallel share, which replaces the size when above 1
    narrows_data,  // above 1, the data-parallel ranks share the member's accelerators
};

struct ParallelDegree {
    std::string name;                // for messages: "tensor", "data-local"
    std::vector<std::string> flags;  // every spelling the engine takes
    std::int64_t minimum = 1;
    std::string env;  // an environment variable that sets it when no flag does
    DegreeUse use = DegreeUse::checked;
};

// An engine's parallel vocabulary: the degree flags, the modes that narrow data parallelism,
// and the flags that wire ranks over nodes (the width is then not one member's business).
struct ParallelTable {
    // The flags that give each member a data-parallel rank of its own (vLLM's External DP):
    // any of `rank_flags`, or any of `start_rank_flags` with a local size of 1.
    struct RankPerMember {
        std::vector<std::string> rank_flags;
        std::vector<std::string> start_rank_flags;
        std::vector<std::string> local_size_flags;
    };
    // Attention data parallelism (SGLang's): switched on by an enable flag, over more than one
    // rank of the size flags.
    struct AttentionDp {
        std::vector<std::string> enable_flags;
        std::vector<std::string> size_flags;
    };

    std::vector<ParallelDegree> degrees;
    std::vector<std::string> narrowing_modes;
    std::vector<std::string> wiring_flags;
    std::optional<RankPerMember> rank_per_member;
    std::optional<AttentionDp> attention_dp;
    // Data-parallel load-balancing shapes, each spelled by any of its flags; a role may derive
    // at most one. The MultiPort shape serves on extra ports and is refused outright.
    std::vector<std::vector<std::string>> balance_shapes;
    std::vector<std::string> multi_port_flags;

    // Every spelling of the degrees, wiring flags and narrowing modes, in that order and then
    // sorted by text (stably), so that a role's flags are looked up rather than each compared
    // with every spelling. Built by index_spellings().
    struct Spelling {
        std::string text;
        enum class Kind { degree, wiring, narrowing } kind = Kind::degree;
        std::size_t degree = 0;  // in `degrees`, for a degree's spelling
    };
    std::vector<Spelling> spellings;

    const ParallelDegree* degree(std::string_view name) const;
    // Fills `spellings` from the lists above; called once they are read.
    void index_spellings();
};

// Whether `written` (a flag name, cut at '=') is an engine's spelling of `flag`, for a pair
// that does not differ at its first letter.
bool spells_past_first_letter(std::string_view written, std::string_view flag,
                              std::string_view shortest_prefix, const FlagSpelling& spelling);

// Whether `written` (a flag name, cut at '=') is an engine's spelling of `flag`. Rules hold
// every flag of a role against tables of dozens, and most pairs differ at the first letter:
// told here, without a call.
inline bool spells(std::string_view written, std::string_view flag,
                   std::string_view shortest_prefix, const FlagSpelling& spelling) {
    return !differ_at_first_letter(written, flag) &&
           spells_past_first_letter(written, flag, shortest_prefix, spelling);
}

struct RuleData {
    int version = 0;
    std::int64_t default_serving_port = 8000;
    std::int64_t decoder_backend_port = 8200;
    std::vector<RuleInfo> rules;
    std::vector<std::string> policy_flags;
    std::vector<RouterData> routers;
    std::string preferred_router_vllm;
    std::string preferred_router_sglang;
    std::vector<EncodeRow> encode_matrix;
    std::vector<ReservedPorts> reserved_ports;
    std::string dp_aware_repository;
    std::string dp_aware_minimum_tag;
    std::vector<std::string> ssl_flags;
    Settings settings;
    // Environment variables the operator sets on every Pod.
    OwnedEnv owned_env;
    std::map<ServingMode, CandidateRule> candidates;
    std::vector<RenderedFlag> rendered_flags;
    std::vector<OwnedArg> owned_args;
    std::map<EngineKind, FlagSpelling> flag_spellings;  // engines not listed: exact only
    // Flags and environment the operator renders on an Elastic EP role (its data-parallel and
    // Ray wiring).
    std::vector<std::string> elastic_ep_owned_flags;
    std::vector<std::string> elastic_ep_owned_env;
    ArtifactOwned artifact;
    std::map<EngineKind, ParallelTable> parallelism;  // engines not listed: nothing to check

    const RuleInfo* rule(std::string_view id) const;
    const RouterData* router(std::string_view name) const;
    const std::string& preferred_router(EngineKind engine) const;
    FlagSpelling spelling(EngineKind engine) const;
    const ParallelTable* parallel_table(EngineKind engine) const;
};

// The data file compiled into the binary (a copy of rules/data/rules.json).
std::string_view embedded_rule_data_json();

// Parses and checks rule data; a malformed file is an Error naming the field and the problem.
Result<RuleData> parse_rule_data(std::string_view json_text, std::string_view origin);
// The data with some settings changed: `overrides` maps data-file setting names to booleans.
Result<RuleData> with_settings(RuleData data, const boost::json::object& overrides);
Result<RuleData> load_rule_data_file(const std::string& path);
RuleData embedded_rule_data();

}  // namespace mdadmit::rules
