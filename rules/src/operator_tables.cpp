// The operator's own tables in the data file: settings, environment it owns, what it renders
// for an artifact, and each engine's parallel vocabulary.
#include <algorithm>
#include <array>

#include "data_reader.hpp"
#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::rules {

namespace {

// Each setting by its data-file name.
constexpr std::array<std::pair<std::string_view, bool Settings::*>, 3> setting_fields{{
    {"privilegedAllowed", &Settings::privileged_allowed},
    {"hostPathVolumeAllowed", &Settings::host_path_volume_allowed},
    {"kvCacheDtypeOwned", &Settings::kv_cache_dtype_owned},
}};

}  // namespace

namespace data_file {

namespace {

DegreeUse parse_use(const json::value& value, const FieldPath& path) {
    const std::string use = DataReader::string(value, path);
    for (const auto& [name, parsed] :
         {std::pair{"width", DegreeUse::width}, std::pair{"data", DegreeUse::data},
          std::pair{"data-local", DegreeUse::data_local},
          std::pair{"narrows-data", DegreeUse::narrows_data}}) {
        if (use == name) {
            return parsed;
        }
    }
    throw DataError{path.text(),
                    "expected width, data, data-local or narrows-data, got \"" + use + "\""};
}

ParallelDegree parse_degree(const json::value& value, const FieldPath& path) {
    const json::object& object = DataReader::object(value, path);
    ParallelDegree out;
    out.name = DataReader::string(DataReader::field(object, "name", path), path.member("name"));
    out.flags = DataReader::strings(DataReader::field(object, "flags", path), path.member("flags"));
    if (out.flags.empty()) {
        throw DataError{path.member("flags").text(), "expected at least one flag"};
    }
    if (const auto* minimum = object.if_contains("minimum")) {
        out.minimum = DataReader::integer(*minimum, path.member("minimum"), 0, 1);
    }
    if (const auto* env = object.if_contains("env")) {
        out.env = DataReader::string(*env, path.member("env"));
    }
    if (const auto* use = object.if_contains("use")) {
        out.use = parse_use(*use, path.member("use"));
    }
    return out;
}

ParallelTable parse_table(const json::value& value, const FieldPath& path) {
    const json::object& object = DataReader::object(value, path);
    ParallelTable out;
    out.degrees = DataReader::each<ParallelDegree>(DataReader::field(object, "degrees", path),
                                                   path.member("degrees"), parse_degree);
    out.narrowing_modes = DataReader::strings(DataReader::field(object, "narrowingModes", path),
                                              path.member("narrowingModes"));
    out.wiring_flags = DataReader::strings(DataReader::field(object, "wiringFlags", path),
                                           path.member("wiringFlags"));
    const auto flags = [&](const json::object& within, std::string_view key, const FieldPath& at) {
        return DataReader::strings(DataReader::field(within, key, at), at.member(key));
    };
    // Required, null where the engine has no such mode, so that a replaced file cannot lose
    // a mode by leaving a key out or misspelling it.
    const json::value& rank = DataReader::field(object, "rankPerMember", path);
    if (!rank.is_null()) {
        const FieldPath at = path.member("rankPerMember");
        const json::object& fields = DataReader::object(rank, at);
        out.rank_per_member = ParallelTable::RankPerMember{flags(fields, "rankFlags", at),
                                                           flags(fields, "startRankFlags", at),
                                                           flags(fields, "localSizeFlags", at)};
    }
    const json::value& attention = DataReader::field(object, "attentionDp", path);
    if (!attention.is_null()) {
        const FieldPath at = path.member("attentionDp");
        const json::object& fields = DataReader::object(attention, at);
        out.attention_dp = ParallelTable::AttentionDp{flags(fields, "enableFlags", at),
                                                      flags(fields, "sizeFlags", at)};
    }
    out.balance_shapes = DataReader::each<std::vector<std::string>>(
        DataReader::field(object, "balanceShapes", path), path.member("balanceShapes"),
        DataReader::strings);
    out.multi_port_flags = flags(object, "multiPortFlags", path);
    out.index_spellings();
    return out;
}

}  // namespace

OwnedEnv parse_owned_env(const json::value& value, const FieldPath& path) {
    OwnedEnv out;
    for (const auto& [key, names] : DataReader::object(value, path)) {
        if (key == "every-engine") {
            out.every_engine = DataReader::strings(names, path.member(key));
        } else {
            out.per_engine[parse_engine(json::string(key), path.member(key))] =
                DataReader::strings(names, path.member(key));
        }
    }
    return out;
}

Settings parse_settings(const json::object& object, const FieldPath& path, Settings base) {
    for (const auto& [key, value] : object) {
        const std::string_view name =
            key;  // a lambda cannot capture a structured binding in clang 14
        const auto field = std::find_if(setting_fields.begin(), setting_fields.end(),
                                        [&](const auto& f) { return f.first == name; });
        if (field == setting_fields.end()) {
            throw DataError{path.member(key).text(),
                            "unknown setting (privilegedAllowed, hostPathVolumeAllowed, "
                            "kvCacheDtypeOwned)"};
        }
        if (!value.is_bool()) {
            throw DataError{path.member(key).text(), "expected true or false"};
        }
        base.*(field->second) = value.get_bool();
    }
    return base;
}

ArtifactOwned parse_artifact(const json::value& value, const FieldPath& path) {
    const json::object& object = DataReader::object(value, path);
    ArtifactOwned out;
    out.args = parse_owned_args(DataReader::field(object, "args", path), path.member("args"));
    out.env = parse_owned_env(DataReader::field(object, "env", path), path.member("env"));
    out.mount_paths = DataReader::strings(DataReader::field(object, "mountPaths", path),
                                          path.member("mountPaths"));
    return out;
}

std::map<EngineKind, ParallelTable> parse_parallelism(const json::value& value,
                                                      const FieldPath& path) {
    std::map<EngineKind, ParallelTable> out;
    for (const auto& [engine, table] : DataReader::object(value, path)) {
        const EngineKind kind = parse_engine(json::string(engine), path.member(engine));
        ParallelTable parsed = parse_table(table, path.member(engine));
        // The rules read these degrees by name: every width needs tensor and data; the Elastic
        // EP rules (vLLM only) read pipeline, prefill-context and its maximum data parallel.
        std::vector<std::string_view> needed{"tensor", "data"};
        if (kind == EngineKind::vllm) {
            needed.insert(needed.end(), {"pipeline", "prefill-context", "elastic-ep-max-dp"});
        }
        for (const auto name : needed) {
            if (parsed.degree(name) == nullptr) {
                throw DataError{path.member(engine).member("degrees").text(),
                                "a degree named \"" + std::string(name) + "\" is required"};
            }
        }
        out[kind] = std::move(parsed);
    }
    return out;
}

}  // namespace data_file

std::optional<bool> Settings::named(std::string_view name) const {
    for (const auto& [field_name, field] : setting_fields) {
        if (field_name == name) {
            return this->*field;
        }
    }
    return std::nullopt;
}

bool OwnedEnv::owns(EngineKind engine, std::string_view name) const {
    const auto listed = [&](const std::vector<std::string>& names) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    const auto it = per_engine.find(engine);
    return listed(every_engine) || (it != per_engine.end() && listed(it->second));
}

const ParallelDegree* ParallelTable::degree(std::string_view name) const {
    const auto it = std::find_if(degrees.begin(), degrees.end(),
                                 [&](const ParallelDegree& d) { return d.name == name; });
    return it == degrees.end() ? nullptr : &*it;
}

void ParallelTable::index_spellings() {
    spellings.clear();
    for (std::size_t i = 0; i < degrees.size(); ++i) {
        for (const auto& text : degrees[i].flags) {
            spellings.push_back({text, Spelling::Kind::degree, i});
        }
    }
    for (const auto& text : wiring_flags) {
        spellings.push_back({text, Spelling::Kind::wiring, 0});
    }
    for (const auto& text : narrowing_modes) {
        spellings.push_back({text, Spelling::Kind::narrowing, 0});
    }
    std::stable_sort(spellings.begin(), spellings.end(),
                     [](const Spelling& a, const Spelling& b) { return a.text < b.text; });
}

}  // namespace mdadmit::rules
