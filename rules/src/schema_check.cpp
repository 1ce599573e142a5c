#include "mdadmit/rules/schema_check.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <numeric>
#include <unordered_set>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "json_kind.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "quantity_json.hpp"

namespace mdadmit::rules {

namespace json = boost::json;

struct SchemaCheck::Compiled {
    json::value document;  // kept to word messages from the constraint that failed
    valijson::Schema schema;
};

namespace {

struct Segment {
    std::string key;
    std::optional<std::size_t> index;
};

std::string render(const std::vector<Segment>& segments) {
    std::string out;
    for (const auto& s : segments) {
        if (s.index) {
            out += '[' + std::to_string(*s.index) + ']';
        } else {
            out += (out.empty() ? "" : ".") + s.key;
        }
    }
    return out;
}

std::string quoted(const json::value& value) {
    std::string text = json::serialize(value);
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

// Follows valijson's context ("<root>", "[spec]", "[roles]", "[0]") through the object and
// the schema, so a finding names the field and quotes the rule it broke.
struct Located {
    std::vector<Segment> segments;
    const json::value* value = nullptr;
    const json::object* schema = nullptr;
};

const json::object* child_schema(const json::object* schema, const Segment& segment) {
    if (schema == nullptr) {
        return nullptr;
    }
    const json::value* next = nullptr;
    if (segment.index) {
        next = schema->if_contains("items");
    } else if (const auto* properties = schema->if_contains("properties");
               properties != nullptr && properties->is_object()) {
        next = properties->get_object().if_contains(segment.key);
    }
    return next != nullptr && next->is_object() ? &next->get_object() : nullptr;
}

Located locate(const std::vector<std::string>& context, const json::value& object,
               const json::object& schema) {
    Located at{{}, &object, &schema};
    for (std::size_t i = 1; i < context.size(); ++i) {
        const std::string& raw = context[i];
        std::string key =
            raw.size() >= 2 && raw.front() == '[' ? raw.substr(1, raw.size() - 2) : raw;
        Segment segment{key, std::nullopt};
        const json::value* next = nullptr;
        if (at.value != nullptr && at.value->is_array()) {
            segment.index = std::stoul(key);
            const auto& array = at.value->get_array();
            next = *segment.index < array.size() ? &array[*segment.index] : nullptr;
        } else if (at.value != nullptr && at.value->is_object()) {
            next = at.value->get_object().if_contains(key);
        }
        at.schema = child_schema(at.schema, segment);
        at.value = next;
        at.segments.push_back(std::move(segment));
    }
    return at;
}

std::string schema_text(const json::object* schema, std::string_view key) {
    if (schema == nullptr) {
        return {};
    }
    const json::value* value = schema->if_contains(key);
    if (value == nullptr) {
        return {};
    }
    if (value->is_string()) {
        return std::string(value->get_string());
    }
    if (value->is_array()) {
        std::string out;
        for (const auto& item : value->get_array()) {
            out += (out.empty() ? "" : ", ") +
                   (item.is_string() ? std::string(item.get_string()) : json::serialize(item));
        }
        return out;
    }
    return json::serialize(*value);
}

DecodeProblem word(const valijson::ValidationResults::Error& error, const json::value& object,
                   const json::object& schema) {
    Located at = locate(error.context, object, schema);
    // An int-or-string quantity fails its `anyOf` and its `pattern` at once: one message.
    if (at.schema != nullptr && at.value != nullptr &&
        at.schema->contains("x-kubernetes-int-or-string")) {
        return {render(at.segments), quantity_problem(*at.value)};
    }
    const std::string& text = error.description;
    const std::string actual = at.value != nullptr ? quoted(*at.value) : std::string("the value");
    std::string message;
    if (text.rfind("Missing required property '", 0) == 0) {
        const auto start = text.find('\'') + 1;
        at.segments.push_back({text.substr(start, text.find('\'', start) - start), std::nullopt});
        message = "required field is missing";
    } else if (text.find("'type' constraint") != std::string::npos) {
        message = "expected " + schema_text(at.schema, "type") + ", got " +
                  (at.value != nullptr ? std::string(json_kind_name(*at.value))
                                       : std::string("another type"));
    } else if (text.find("enum") != std::string::npos) {
        message =
            "unsupported value " + actual + "; expected one of: " + schema_text(at.schema, "enum");
    } else if (text.find("regex") != std::string::npos) {
        message = actual + " must match " + schema_text(at.schema, "pattern");
    } else if (text.find("number") != std::string::npos) {
        const std::string minimum = schema_text(at.schema, "minimum");
        const std::string maximum = schema_text(at.schema, "maximum");
        message =
            actual + " is out of range: " +
            (maximum.empty() ? "minimum " + minimum
                             : "from " + (minimum.empty() ? "-inf" : minimum) + " to " + maximum);
    } else if (text.find("Array should contain") != std::string::npos) {
        const std::size_t count =
            at.value != nullptr && at.value->is_array() ? at.value->get_array().size() : 0;
        message = "has " + std::to_string(count) +
                  " entries; allowed: " + schema_text(at.schema, "minItems") + " to " +
                  schema_text(at.schema, "maxItems");
    } else if (text.find("String should be") != std::string::npos) {
        message =
            actual + " has the wrong length; at most " + schema_text(at.schema, "maxLength") +
            " characters, at least " +
            (schema_text(at.schema, "minLength").empty() ? "0"
                                                         : schema_text(at.schema, "minLength"));
    } else {
        message = text;
    }
    return {render(at.segments), std::move(message)};
}

bool is_strict_prefix(const std::string& prefix, const std::string& path) {
    if (prefix.size() >= path.size() || path.compare(0, prefix.size(), prefix) != 0) {
        return false;
    }
    return prefix.empty() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

// valijson reports every enclosing object too; keeps only the deepest field at fault, once,
// in the order reported. Sorting the paths puts each one's extensions right after it, so a
// hostile object with tens of thousands of wrong fields costs n log n, not n squared.
std::vector<DecodeProblem> deepest_of(std::vector<DecodeProblem> problems) {
    std::vector<std::size_t> order(problems.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return problems[a].path < problems[b].path; });
    std::vector<bool> enclosing(problems.size(), false);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::string& path = problems[order[i]].path;
        for (std::size_t j = i + 1; j < order.size() && problems[order[j]].path.starts_with(path);
             ++j) {
            if (is_strict_prefix(path, problems[order[j]].path)) {
                enclosing[order[i]] = true;
                break;
            }
        }
    }
    std::vector<DecodeProblem> out;
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < problems.size(); ++i) {
        if (!enclosing[i] && seen.insert(problems[i].path + '\n' + problems[i].message).second) {
            out.push_back(std::move(problems[i]));
        }
    }
    return out;
}

}  // namespace

SchemaCheck::SchemaCheck(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}
SchemaCheck::~SchemaCheck() = default;
SchemaCheck::SchemaCheck(SchemaCheck&&) noexcept = default;
SchemaCheck& SchemaCheck::operator=(SchemaCheck&&) noexcept = default;

Result<SchemaCheck> SchemaCheck::create(std::string_view schema_json) {
    auto parsed = parse_json(schema_json);
    if (!parsed) {
        return Error{"ModelDeployment schema: " + parsed.error().message};
    }
    if (!parsed.value().is_object()) {
        return Error{"ModelDeployment schema: the document must be a JSON object"};
    }
    auto compiled = std::make_unique<Compiled>();
    compiled->document = std::move(parsed).value();
    try {
        valijson::SchemaParser parser;
        valijson::adapters::BoostJsonAdapter adapter(compiled->document);
        parser.populateSchema(adapter, compiled->schema);
    } catch (const std::exception& e) {
        return Error{std::string("ModelDeployment schema: ") + e.what()};
    }
    return SchemaCheck(std::move(compiled));
}

SchemaCheck SchemaCheck::embedded() {
    auto check = create(embedded_schema_json());
    // The built-in schema is checked by the unit tests; failing here is a build defect.
    if (!check) {
        std::abort();
    }
    return std::move(check).value();
}

std::vector<DecodeProblem> SchemaCheck::check(const json::value& object) const {
    // valijson's Validator caches compiled regexes and is not thread-safe: one per thread.
    thread_local valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::BoostJsonAdapter target(object);
    if (validator.validate(compiled_->schema, target, &results)) {
        return {};
    }
    std::vector<DecodeProblem> problems;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        problems.push_back(word(error, object, compiled_->document.get_object()));
    }
    return deepest_of(std::move(problems));
}

}  // namespace mdadmit::rules
