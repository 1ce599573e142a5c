#pragma once

// Strict reading of the rule data file, shared by the files that parse its sections.

#include <boost/json/value.hpp>
#include <map>
#include <string>
#include <vector>

#include "field_path.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/platform.hpp"
#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::rules::data_file {

namespace json = boost::json;

// Thrown only while reading the data file and turned into an Error at the parse_rule_data
// boundary.
struct DataError {
    std::string path;
    std::string problem;
};

// Every field read with `field` is required; optional fields are read with `if_contains`.
class DataReader {
  public:
    static const json::object& object(const json::value& value, const FieldPath& path) {
        if (!value.is_object()) {
            throw DataError{path.text(), "expected an object"};
        }
        return value.get_object();
    }

    static const json::value& field(const json::object& object, std::string_view key,
                                    const FieldPath& path) {
        const json::value* value = object.if_contains(key);
        if (value == nullptr) {
            throw DataError{path.member(key).text(), "required field is missing"};
        }
        return *value;
    }

    static const json::array& array(const json::value& value, const FieldPath& path) {
        if (!value.is_array()) {
            throw DataError{path.text(), "expected an array"};
        }
        return value.get_array();
    }

    static std::string string(const json::value& value, const FieldPath& path) {
        if (!value.is_string() || value.get_string().empty()) {
            throw DataError{path.text(), "expected a non-empty string"};
        }
        return std::string(value.get_string());
    }

    static std::int64_t integer(const json::value& value, const FieldPath& path,
                                std::int64_t minimum, std::int64_t maximum) {
        if (!value.is_int64() || value.get_int64() < minimum || value.get_int64() > maximum) {
            throw DataError{path.text(), "expected an integer from " + std::to_string(minimum) +
                                             " to " + std::to_string(maximum)};
        }
        return value.get_int64();
    }

    static std::vector<std::string> strings(const json::value& value, const FieldPath& path) {
        std::vector<std::string> out;
        const json::array& items = array(value, path);
        for (std::size_t i = 0; i < items.size(); ++i) {
            out.push_back(string(items[i], path.element(i)));
        }
        return out;
    }

    template <typename T, typename Parse>
    static std::vector<T> each(const json::value& value, const FieldPath& path, Parse parse) {
        std::vector<T> out;
        const json::array& items = array(value, path);
        for (std::size_t i = 0; i < items.size(); ++i) {
            out.push_back(parse(items[i], path.element(i)));
        }
        return out;
    }
};

using R = DataReader;

inline EngineKind parse_engine(const json::value& value, const FieldPath& path) {
    const std::string name = R::string(value, path);
    if (name == "vLLM")
        return EngineKind::vllm;
    if (name == "SGLang")
        return EngineKind::sglang;
    throw DataError{path.text(), "unknown engine \"" + name + "\"; expected vLLM or SGLang"};
}

inline Platform parse_platform(const json::value& value, const FieldPath& path) {
    const std::string name = R::string(value, path);
    for (Platform p : {Platform::nvidia, Platform::amd, Platform::ascend, Platform::other}) {
        if (name == to_string(p)) {
            return p;
        }
    }
    throw DataError{path.text(),
                    "unknown platform \"" + name + "\"; expected nvidia, amd, ascend or other"};
}

inline RoleKind parse_kind(const json::value& value, const FieldPath& path) {
    const std::string name = R::string(value, path);
    for (RoleKind k : {RoleKind::server, RoleKind::prefill, RoleKind::decode, RoleKind::encode}) {
        if (name == to_string(k)) {
            return k;
        }
    }
    throw DataError{path.text(), "unknown role kind \"" + name + "\""};
}

// Sections parsed in their own files.
std::vector<OwnedArg> parse_owned_args(const json::value& value, const FieldPath& path);
OwnedEnv parse_owned_env(const json::value& value, const FieldPath& path);
Settings parse_settings(const json::object& object, const FieldPath& path, Settings base);
ArtifactOwned parse_artifact(const json::value& value, const FieldPath& path);
std::map<EngineKind, ParallelTable> parse_parallelism(const json::value& value,
                                                      const FieldPath& path);
std::map<EngineKind, FlagSpelling> parse_flag_spellings(const json::value& value,
                                                        const FieldPath& path);

}  // namespace mdadmit::rules::data_file
