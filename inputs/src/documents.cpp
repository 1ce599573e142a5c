#include "mdadmit/inputs/documents.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/limits.hpp"
#include "yaml_reader.hpp"

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

bool looks_like_json(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

// A List's items in its place, or the document itself.
void append(std::vector<Document>& out, Document document) {
    const std::string_view kind = kind_of(document.value);
    const json::value* items =
        document.value.is_object() ? document.value.get_object().if_contains("items") : nullptr;
    if (!kind.ends_with("List") || items == nullptr || !items->is_array()) {
        out.push_back(std::move(document));
        return;
    }
    std::size_t position = 0;
    for (const auto& item : items->get_array()) {
        out.push_back({item, document.source, document.index, document.line, ++position});
    }
}

}  // namespace

rules::Result<std::vector<Document>> parse_documents(std::string_view text,
                                                     const std::string& source) {
    std::vector<Document> out;
    if (text.size() > rules::limits::max_manifest_bytes) {
        return rules::Error{source + ": larger than " +
                            std::to_string(rules::limits::max_manifest_bytes / (1024 * 1024)) +
                            " MiB, the most a manifest file may hold"};
    }
    if (looks_like_json(text)) {
        auto parsed = rules::parse_json(text);
        if (!parsed) {
            return rules::Error{source + ": " + parsed.error().message};
        }
        append(out, {std::move(parsed).value(), source, 1, 1, 0});
        return out;
    }
    auto documents = read_yaml_stream(text, source);
    if (!documents) {
        return documents.error();
    }
    for (auto& document : documents.value()) {
        append(out, {std::move(document.value), source, document.index, document.line, 0});
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
