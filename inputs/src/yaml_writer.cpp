#include "yaml_writer.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <charconv>

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

bool is_scalar(const json::value& value) {
    return !value.is_object() && !value.is_array();
}

// A value written on the line of its key or dash: scalars, lists of scalars, empty maps.
bool is_inline(const json::value& value) {
    if (value.is_object()) {
        return value.get_object().empty();
    }
    if (value.is_array()) {
        const auto& items = value.get_array();
        return std::all_of(items.begin(), items.end(), is_scalar);
    }
    return true;
}

// A key that reads back as itself without quotes: a word that is not a YAML keyword.
bool plain_key(std::string_view key) {
    if (key.empty() || !(std::isalpha(static_cast<unsigned char>(key.front())) || key[0] == '_' ||
                         key[0] == '$')) {
        return false;
    }
    for (const std::string_view keyword :
         {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}) {
        if (std::equal(key.begin(), key.end(), keyword.begin(), keyword.end(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == b;
            })) {
            return false;
        }
    }
    return std::all_of(key.begin(), key.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '$';
    });
}

std::string number(double value) {
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text, value);
    std::string out(text, written.ptr);
    // A whole number keeps a point, so it reads back as a number of the same kind.
    if (out.find_first_of(".eEn") == std::string::npos) {
        out += ".0";
    }
    return out;
}

// A scalar, a list of scalars or an empty map, as it stands after "key: " or "- ".
std::string inline_text(const json::value& value) {
    switch (value.kind()) {
        case json::kind::object:
            return "{}";
        case json::kind::array: {
            std::string out = "[";
            for (const auto& item : value.get_array()) {
                out += (out.size() > 1 ? ", " : "") + inline_text(item);
            }
            return out + "]";
        }
        case json::kind::string:
            return json::serialize(value);  // a JSON string is a YAML double-quoted scalar
        case json::kind::double_:
            return number(value.get_double());
        case json::kind::int64:
        case json::kind::uint64:
        case json::kind::bool_:
        case json::kind::null:
            return json::serialize(value);
    }
    return "null";
}

void write(std::string& out, const json::value& value, std::size_t indent);

void write_map(std::string& out, const json::object& map, std::size_t indent) {
    for (const auto& [key, item] : map) {
        out.append(indent, ' ');
        out += plain_key(key) ? std::string(key) : json::serialize(json::value(key));
        if (is_inline(item)) {
            out += ": " + inline_text(item) + "\n";
        } else {
            out += ":\n";
            write(out, item, indent + 2);
        }
    }
}

void write_list(std::string& out, const json::array& list, std::size_t indent) {
    for (const auto& item : list) {
        if (is_inline(item)) {
            out.append(indent, ' ');
            out += "- " + inline_text(item) + "\n";
            continue;
        }
        // The item's first line follows the dash; the rest line up under it.
        std::string nested;
        write(nested, item, indent + 2);
        nested.replace(indent, 2, "- ");
        out += nested;
    }
}

void write(std::string& out, const json::value& value, std::size_t indent) {
    if (value.is_object()) {
        write_map(out, value.get_object(), indent);
    } else if (value.is_array()) {
        write_list(out, value.get_array(), indent);
    } else {
        out.append(indent, ' ');
        out += inline_text(value) + "\n";
    }
}

}  // namespace

std::string yaml_text(const json::value& value) {
    if (is_inline(value)) {
        return inline_text(value) + "\n";
    }
    std::string out;
    write(out, value, 0);
    return out;
}

}  // namespace mdadmit::inputs
