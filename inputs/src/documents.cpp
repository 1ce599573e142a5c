#include "mdadmit/inputs/documents.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/limits.hpp"

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// [-+]?(.digits|digits(.digits?)?)([eE][-+]?digits)?, the YAML 1.2 core schema's float.
bool is_float(std::string_view text) {
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
        text.remove_prefix(1);
    }
    const std::size_t exponent = text.find_first_of("eE");
    std::string_view mantissa = text.substr(0, exponent);
    if (exponent != std::string_view::npos) {
        std::string_view power = text.substr(exponent + 1);
        if (!power.empty() && (power.front() == '-' || power.front() == '+')) {
            power.remove_prefix(1);
        }
        if (!all_digits(power)) {
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

// An unquoted scalar as YAML's core schema reads it; `mark` places an error.
json::value plain_scalar(const std::string& text, const YAML::Mark& mark) {
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
        return nullptr;
    }
    if (text == "true" || text == "True" || text == "TRUE") {
        return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
        return false;
    }
    const std::string_view unsigned_part =
        std::string_view(text).substr(text.front() == '-' || text.front() == '+' ? 1 : 0);
    if (all_digits(unsigned_part)) {
        std::int64_t value = 0;
        const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
        const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
        if (ec == std::errc{} && end == text.data() + text.size()) {
            return value;
        }
        return json::string(
            text);  // out of range for an integer: keep the text, not a rounded number
    }
    if (is_float(text)) {
        double value = 0;
        const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
        const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
        if (ec == std::errc::result_out_of_range) {
            throw YAML::ParserException(mark, "the number " + text + " is out of range");
        }
        if (ec == std::errc{} && end == text.data() + text.size()) {
            return value;
        }
        return json::string(text);
    }
    return json::string(text);
}

json::value to_json(const YAML::Node& node, std::size_t depth) {
    if (depth > rules::limits::max_json_depth) {
        throw YAML::ParserException(node.Mark(), "nesting deeper than the limit");
    }
    switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
            // yaml-cpp tags a quoted scalar "!" and a plain one "?".
            return node.Tag() == "!" ? json::value(json::string(node.Scalar()))
                                     : plain_scalar(node.Scalar(), node.Mark());
        case YAML::NodeType::Sequence: {
            json::array out;
            out.reserve(node.size());
            for (const auto& item : node) {
                out.push_back(to_json(item, depth + 1));
            }
            return out;
        }
        case YAML::NodeType::Map: {
            json::object out;
            for (const auto& entry : node) {
                out[entry.first.as<std::string>()] = to_json(entry.second, depth + 1);
            }
            return out;
        }
    }
    return nullptr;
}

bool looks_like_json(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

}  // namespace

rules::Result<std::vector<Document>> parse_documents(std::string_view text,
                                                     const std::string& source) {
    std::vector<Document> out;
    if (looks_like_json(text)) {
        auto parsed = rules::parse_json(text);
        if (!parsed) {
            return rules::Error{source + ": " + parsed.error().message};
        }
        out.push_back({std::move(parsed).value(), source, 1, 1});
        return out;
    }
    try {
        std::size_t index = 0;
        for (const YAML::Node& node : YAML::LoadAll(std::string(text))) {
            ++index;
            if (node.IsNull()) {
                continue;  // an empty document between separators
            }
            out.push_back(
                {to_json(node, 0), source, index, static_cast<std::size_t>(node.Mark().line + 1)});
        }
    } catch (const YAML::Exception& e) {
        const std::string where = e.mark.is_null()
                                      ? source
                                      : source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                            std::to_string(e.mark.column + 1);
        return rules::Error{where + ": not valid YAML or JSON: " + e.msg};
    }
    return out;
}

rules::Result<std::vector<Document>> read_documents(const std::string& path) {
    std::ostringstream text;
    if (path == "-") {
        text << std::cin.rdbuf();
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            return rules::Error{path + ": cannot open the file"};
        }
        text << in.rdbuf();
    }
    return parse_documents(text.str(), path);
}

rules::Result<std::vector<Document>> read_inputs(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const auto& path : paths) {
        std::error_code ec;
        if (path == "-" || !fs::is_directory(path, ec)) {
            files.push_back(path);
            continue;
        }
        std::vector<std::string> found;
        for (auto it = fs::recursive_directory_iterator(path, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            const std::string extension = it->path().extension().string();
            if (it->is_regular_file() &&
                (extension == ".yaml" || extension == ".yml" || extension == ".json")) {
                found.push_back(it->path().string());
            }
        }
        if (ec) {
            return rules::Error{path + ": " + ec.message()};
        }
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    std::vector<Document> out;
    for (const auto& file : files) {
        auto documents = read_documents(file);
        if (!documents) {
            return documents.error();
        }
        for (auto& document : documents.value()) {
            out.push_back(std::move(document));
        }
    }
    return out;
}

std::string_view kind_of(const json::value& document) {
    if (const auto* object = document.if_object()) {
        if (const auto* kind = object->if_contains("kind"); kind != nullptr && kind->is_string()) {
            return kind->get_string();
        }
    }
    return {};
}

void collect_instance_types(const std::vector<Document>& documents, rules::InstanceTypes& out) {
    for (const auto& document : documents) {
        if (kind_of(document.value) != "InstanceType") {
            continue;
        }
        if (auto named = rules::decode_instance_type(document.value)) {
            out[named->name] = std::move(named->type);
        }
    }
}

}  // namespace mdadmit::inputs
