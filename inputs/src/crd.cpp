#include "mdadmit/inputs/crd.hpp"

#include "yaml_writer.hpp"

namespace mdadmit::inputs {

namespace {

namespace json = boost::json;

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
    return "# Generated from rules/data/modeldeployment.schema.json by mdadmit-gen-crd; do not "
           "edit.\n" +
           yaml_text(crd);
}

}  // namespace mdadmit::inputs
