#include "mdadmit/inputs/crd.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

void emit(YAML::Emitter& out, const json::value& value) {
    switch (value.kind()) {
        case json::kind::object:
            out << YAML::BeginMap;
            for (const auto& [key, item] : value.get_object()) {
                out << YAML::Key << std::string(key) << YAML::Value;
                emit(out, item);
            }
            out << YAML::EndMap;
            return;
        case json::kind::array: {
            // Lists of scalars (enum, required) read best on one line; lists of objects do not.
            const auto& items = value.get_array();
            const bool scalars = std::none_of(
                items.begin(), items.end(),
                [](const json::value& item) { return item.is_object() || item.is_array(); });
            if (scalars) {
                out << YAML::Flow;
            }
            out << YAML::BeginSeq;
            for (const auto& item : value.get_array()) {
                emit(out, item);
            }
            out << YAML::EndSeq;
            return;
        }
        case json::kind::string:
            // Always quoted, so a value like "TCP" or "1" can never change type.
            out << YAML::DoubleQuoted << std::string(value.get_string());
            return;
        case json::kind::bool_:
            out << value.get_bool();
            return;
        case json::kind::int64:
            out << value.get_int64();
            return;
        case json::kind::uint64:
            out << value.get_uint64();
            return;
        case json::kind::double_:
            out << value.get_double();
            return;
        case json::kind::null:
            out << YAML::Null;
            return;
    }
}

json::value version(std::string_view name, bool storage, const json::value& schema) {
    return json::object{{"name", name},
                        {"served", true},
                        {"storage", storage},
                        {"schema", json::object{{"openAPIV3Schema", schema}}},
                        {"subresources", json::object{{"status", json::object{}}}}};
}

}  // namespace

std::string crd_yaml(const json::value& schema) {
    const json::value crd = json::object{
        {"apiVersion", "apiextensions.k8s.io/v1"},
        {"kind", "CustomResourceDefinition"},
        {"metadata", json::object{{"name", "modeldeployments.worker.gpustack.ai"}}},
        {"spec", json::object{{"group", "worker.gpustack.ai"},
                              {"names", json::object{{"kind", "ModelDeployment"},
                                                     {"listKind", "ModelDeploymentList"},
                                                     {"plural", "modeldeployments"},
                                                     {"singular", "modeldeployment"}}},
                              {"scope", "Namespaced"},
                              {"versions", json::array{version("v1", true, schema),
                                                       version("v1alpha1", false, schema)}}}}};
    YAML::Emitter out;
    out.SetIndent(2);
    emit(out, crd);
    return "# Generated from rules/data/modeldeployment.schema.json by mdadmit-gen-crd; do not "
           "edit.\n" +
           std::string(out.c_str()) + "\n";
}

}  // namespace mdadmit::inputs
