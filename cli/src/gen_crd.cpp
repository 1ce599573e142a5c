// Writes the ModelDeployment CRD generated from the engine's built-in schema to stdout:
//   build/cli/mdadmit-gen-crd > manifests/crd/modeldeployment.yaml
#include <iostream>

#include "mdadmit/inputs/crd.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/schema_check.hpp"

int main() {
    auto schema = mdadmit::rules::parse_json(mdadmit::rules::embedded_schema_json());
    if (!schema) {
        std::cerr << "mdadmit-gen-crd: " << schema.error().message << "\n";
        return 1;
    }
    std::cout << mdadmit::inputs::crd_yaml(schema.value());
    return 0;
}
