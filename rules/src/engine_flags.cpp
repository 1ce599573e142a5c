// The engine flags the operator owns: their data-file sections and how engines spell them.
#include <algorithm>

#include "data_reader.hpp"
#include "mdadmit/rules/arg_stream.hpp"
#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::rules {

namespace data_file {

namespace {

OwnedArg parse_owned_arg(const json::value& value, const FieldPath& path) {
    const json::object& object = DataReader::object(value, path);
    OwnedArg out;
    out.flag = DataReader::string(DataReader::field(object, "flag", path), path.member("flag"));
    if (const auto* engine = object.if_contains("engine")) {
        out.engine = parse_engine(*engine, path.member("engine"));
    }
    if (const auto* kind = object.if_contains("kind")) {
        out.kind = parse_kind(*kind, path.member("kind"));
    }
    if (const auto* when = object.if_contains("when")) {
        const std::string text = DataReader::string(*when, path.member("when"));
        if (text == "encode-role") {
            out.when = OwnedWhen::encode_role;
        } else if (text == "kv-cache") {
            out.when = OwnedWhen::kv_cache;
        } else {
            throw DataError{path.member("when").text(),
                            "expected encode-role or kv-cache, got \"" + text + "\""};
        }
    }
    if (const auto* setting = object.if_contains("setting")) {
        out.setting = DataReader::string(*setting, path.member("setting"));
        if (!Settings{}.named(out.setting)) {
            throw DataError{path.member("setting").text(),
                            "unknown setting \"" + out.setting + "\""};
        }
    }
    if (const auto* prefix = object.if_contains("shortestPrefix")) {
        out.shortest_prefix = DataReader::string(*prefix, path.member("shortestPrefix"));
        if (!out.flag.starts_with(out.shortest_prefix)) {
            throw DataError{path.member("shortestPrefix").text(),
                            "\"" + out.shortest_prefix + "\" is not a prefix of " + out.flag};
        }
    }
    out.reason =
        DataReader::string(DataReader::field(object, "reason", path), path.member("reason"));
    return out;
}

}  // namespace

std::vector<OwnedArg> parse_owned_args(const json::value& value, const FieldPath& path) {
    return DataReader::each<OwnedArg>(value, path, parse_owned_arg);
}

std::map<EngineKind, FlagSpelling> parse_flag_spellings(const json::value& value,
                                                        const FieldPath& path) {
    std::map<EngineKind, FlagSpelling> out;
    for (const auto& [engine, item] : DataReader::object(value, path)) {
        const FieldPath engine_path = path.member(engine);
        FlagSpelling spelling;
        for (const std::string& feature : DataReader::strings(item, engine_path)) {
            if (feature == "underscores") {
                spelling.underscores = true;
            } else if (feature == "dotted-members") {
                spelling.dotted_members = true;
            } else if (feature == "unique-prefixes") {
                spelling.unique_prefixes = true;
            } else {
                throw DataError{engine_path.text(),
                                "expected underscores, dotted-members or unique-prefixes, got \"" +
                                    feature + "\""};
            }
        }
        out[parse_engine(json::string(engine), engine_path)] = spelling;
    }
    return out;
}

}  // namespace data_file

bool spells_past_first_letter(std::string_view written, std::string_view flag,
                              std::string_view shortest_prefix, const FlagSpelling& spelling) {
    if (!written.starts_with("--")) {
        return written == flag;  // short aliases have one spelling
    }
    if (spelling.dotted_members) {
        written = written.substr(0, written.find('.'));
    }
    if (!same_flag_name(written, flag, spelling.underscores, true)) {
        return false;  // neither the flag nor a start of it
    }
    return written.size() == flag.size() || (spelling.unique_prefixes && !shortest_prefix.empty() &&
                                             written.size() >= shortest_prefix.size());
}

}  // namespace mdadmit::rules
