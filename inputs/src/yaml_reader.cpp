#include "yaml_reader.hpp"

#include <yaml.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <charconv>
#include <map>
#include <memory>
#include <utility>

#include "mdadmit/rules/limits.hpp"

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

// A problem at a place of the stream; caught once, at the top, and made an Error.
struct Problem {
    std::string message;
    yaml_mark_t mark;
};

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// [-+]?(.digits|digits(.digits?)?)([eE][-+]?digits)?, the YAML 1.2 core schema's float.
bool is_float(std::string_view text) {
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
        text.remove_prefix(1);
    }
    std::string_view mantissa = text;
    if (const std::size_t e = text.find_first_of("eE"); e != std::string_view::npos) {
        mantissa = text.substr(0, e);
        std::string_view exponent = text.substr(e + 1);
        if (!exponent.empty() && (exponent.front() == '-' || exponent.front() == '+')) {
            exponent.remove_prefix(1);
        }
        if (!all_digits(exponent)) {
            return false;
        }
    }
    const std::size_t dot = mantissa.find('.');
    if (dot == std::string_view::npos) {
        return all_digits(mantissa);
    }
    const std::string_view whole = mantissa.substr(0, dot);
    const std::string_view fraction = mantissa.substr(dot + 1);
    return (whole.empty() || all_digits(whole)) && (fraction.empty() || all_digits(fraction)) &&
           !(whole.empty() && fraction.empty());
}

// An unquoted scalar as the YAML 1.2 core schema reads it.
json::value plain_scalar(const std::string& text, const yaml_mark_t& mark) {
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
        return nullptr;
    }
    if (text == "true" || text == "True" || text == "TRUE") {
        return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
        return false;
    }
    const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
    const char* end = text.data() + text.size();
    const std::string_view unsigned_part =
        std::string_view(text).substr(text.front() == '-' || text.front() == '+' ? 1 : 0);
    if (all_digits(unsigned_part)) {
        std::int64_t value = 0;
        const auto [stop, ec] = std::from_chars(begin, end, value);
        if (ec == std::errc{} && stop == end) {
            return value;
        }
        return json::string(text);  // beyond an integer: the text, not a rounded number
    }
    if (is_float(text)) {
        double value = 0;
        const auto [stop, ec] = std::from_chars(begin, end, value);
        if (ec == std::errc::result_out_of_range) {
            throw Problem{"the number " + text + " is out of range", mark};
        }
        if (ec == std::errc{} && stop == end) {
            return value;
        }
    }
    return json::string(text);
}

// One libyaml event, released when it goes.
class Event {
  public:
    Event() = default;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event() { yaml_event_delete(&event_); }

    yaml_event_t* get() { return &event_; }
    yaml_event_type_t type() const { return event_.type; }
    const yaml_mark_t& mark() const { return event_.start_mark; }
    const yaml_event_t& operator*() const { return event_; }

  private:
    yaml_event_t event_{};
};

// Values of the stream built from libyaml's events, one document at a time.
class Reader {
  public:
    explicit Reader(std::string_view text) {
        if (yaml_parser_initialize(&parser_) == 0) {
            throw Problem{"cannot start the YAML parser", {}};
        }
        yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                     text.size());
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader() { yaml_parser_delete(&parser_); }

    std::vector<YamlDocument> documents() {
        std::vector<YamlDocument> out;
        expect(next(), YAML_STREAM_START_EVENT);
        for (std::size_t index = 1;; ++index) {
            const auto start = next();
            if (start->type() == YAML_STREAM_END_EVENT) {
                return out;
            }
            expect(start, YAML_DOCUMENT_START_EVENT);
            anchors_.clear();  // an anchor names a node of its own document only
            auto root = next();
            const std::size_t line = root->mark().line + 1;
            Built built = node(*root, 1);
            expect(next(), YAML_DOCUMENT_END_EVENT);
            if (!built.value.is_null()) {
                out.push_back({std::move(built.value), index, line});
            }
        }
    }

  private:
    // A value with what an alias to it would cost: its values and its depth.
    struct Built {
        json::value value;
        std::size_t values = 1;
        std::size_t depth = 1;
    };

    std::unique_ptr<Event> next() {
        auto event = std::make_unique<Event>();
        if (yaml_parser_parse(&parser_, event->get()) == 0) {
            std::string message = parser_.problem != nullptr ? parser_.problem : "unreadable YAML";
            if (parser_.context != nullptr) {
                message = std::string(parser_.context) + ": " + message;
            }
            throw Problem{message, parser_.problem_mark};
        }
        return event;
    }

    static void expect(const std::unique_ptr<Event>& event, yaml_event_type_t type) {
        if (event->type() != type) {
            throw Problem{"unexpected YAML structure", event->mark()};
        }
    }

    static std::string text_of(const yaml_event_t& event) {
        return std::string(reinterpret_cast<const char*>(event.data.scalar.value),
                           event.data.scalar.length);
    }

    void remember(const unsigned char* anchor, const Built& built) {
        if (anchor != nullptr) {
            anchors_[reinterpret_cast<const char*>(anchor)] = built;
        }
    }

    Built node(Event& event, std::size_t depth) {
        if (depth > rules::limits::max_json_depth) {
            throw Problem{
                "nesting deeper than " + std::to_string(rules::limits::max_json_depth) + " levels",
                event.mark()};
        }
        const yaml_event_t& data = *event;
        switch (event.type()) {
            case YAML_SCALAR_EVENT: {
                const bool text_tag =
                    data.data.scalar.tag != nullptr &&
                    std::string_view(reinterpret_cast<const char*>(data.data.scalar.tag)) ==
                        YAML_STR_TAG;
                const bool plain = data.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !text_tag;
                Built built{plain ? plain_scalar(text_of(data), event.mark())
                                  : json::value(json::string(text_of(data)))};
                ++values_;
                remember(data.data.scalar.anchor, built);
                return built;
            }
            case YAML_ALIAS_EVENT:
                return alias(reinterpret_cast<const char*>(data.data.alias.anchor), event.mark(),
                             depth);
            case YAML_SEQUENCE_START_EVENT: {
                Built built{json::array{}};
                for (auto item = next(); item->type() != YAML_SEQUENCE_END_EVENT; item = next()) {
                    Built child = node(*item, depth + 1);
                    built.values += child.values;
                    built.depth = std::max(built.depth, child.depth + 1);
                    built.value.get_array().push_back(std::move(child.value));
                }
                ++values_;
                remember(data.data.sequence_start.anchor, built);
                return built;
            }
            case YAML_MAPPING_START_EVENT: {
                Built built{json::object{}};
                for (auto key = next(); key->type() != YAML_MAPPING_END_EVENT; key = next()) {
                    if (key->type() != YAML_SCALAR_EVENT) {
                        throw Problem{"a mapping key must be a plain value", key->mark()};
                    }
                    auto value = next();
                    Built child = node(*value, depth + 1);
                    built.values += child.values;
                    built.depth = std::max(built.depth, child.depth + 1);
                    built.value.get_object().insert_or_assign(text_of(**key),
                                                              std::move(child.value));
                }
                ++values_;
                remember(data.data.mapping_start.anchor, built);
                return built;
            }
            default:
                throw Problem{"unexpected YAML structure", event.mark()};
        }
    }

    // A copy of the anchored node, within bounds: aliases may not copy more values than the
    // stream has read itself (plus a little), which defeats the "billion laughs" expansion.
    Built alias(const std::string& anchor, const yaml_mark_t& mark, std::size_t depth) {
        const auto found = anchors_.find(anchor);
        if (found == anchors_.end()) {
            throw Problem{"unknown anchor *" + anchor, mark};
        }
        const Built& original = found->second;
        if (depth + original.depth - 1 > rules::limits::max_json_depth) {
            throw Problem{
                "nesting deeper than " + std::to_string(rules::limits::max_json_depth) + " levels",
                mark};
        }
        copied_ += original.values;
        if (copied_ > values_ + alias_allowance) {
            throw Problem{"aliases copy more values than the document holds", mark};
        }
        return original;
    }

    static constexpr std::size_t alias_allowance = 10'000;

    yaml_parser_t parser_{};
    std::map<std::string, Built> anchors_;
    std::size_t values_ = 0;  // read from the stream
    std::size_t copied_ = 0;  // copied by aliases
};

}  // namespace

rules::Result<std::vector<YamlDocument>> read_yaml_stream(std::string_view text,
                                                          const std::string& source) {
    try {
        Reader reader(text);
        return reader.documents();
    } catch (const Problem& problem) {
        return rules::Error{source + ":" + std::to_string(problem.mark.line + 1) + ":" +
                            std::to_string(problem.mark.column + 1) +
                            ": not valid YAML or JSON: " + problem.message};
    }
}

}  // namespace mdadmit::inputs
