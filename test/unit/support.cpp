#include "support.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/decode.hpp"

namespace mdadmit::test {

rules::Evaluation judge(std::string_view yaml, rules::EngineOptions options) {
    auto documents = inputs::parse_documents(yaml, "test");
    if (!documents) {
        throw std::runtime_error(documents.error().message);
    }
    rules::InstanceTypes instance_types;
    inputs::collect_instance_types(documents.value(), instance_types);
    static const rules::Engine full = rules::Engine::with_embedded_data();
    const rules::Engine custom = rules::Engine::with_embedded_data(options);
    const bool defaults = options.structure_check == rules::StructureCheck::full &&
                          options.enforcement.entries.empty();
    for (const auto& document : documents.value()) {
        if (inputs::kind_of(document.value) == "ModelDeployment") {
            return (defaults ? full : custom).evaluate({document.value, nullptr, &instance_types});
        }
    }
    throw std::runtime_error("no ModelDeployment in the test input");
}

rules::Evaluation judge_update(std::string_view yaml, std::string_view old_yaml) {
    const auto only_document = [](std::string_view text) {
        auto documents = inputs::parse_documents(text, "test");
        if (!documents || documents.value().size() != 1) {
            throw std::runtime_error("expected one ModelDeployment document");
        }
        return documents.value().front().value;
    };
    const boost::json::value object = only_document(yaml);
    const boost::json::value old_object = only_document(old_yaml);
    static const rules::Engine engine = rules::Engine::with_embedded_data();
    return engine.evaluate({object, &old_object, nullptr, rules::Operation::update});
}

std::vector<rules::Finding> of_rule(const rules::Evaluation& evaluation, std::string_view rule) {
    std::vector<rules::Finding> out;
    for (const auto& finding : evaluation.findings) {
        if (finding.rule == rule) {
            out.push_back(finding);
        }
    }
    return out;
}

std::vector<std::string> rule_paths(const rules::Evaluation& evaluation) {
    std::vector<std::string> out;
    for (const auto& finding : evaluation.findings) {
        out.push_back(std::string(finding.rule) + "@" + finding.path);
    }
    return out;
}

}  // namespace mdadmit::test

namespace mdadmit::test {

std::string deployment(std::string_view engine, std::string_view router, std::string_view roles,
                       std::string_view extra) {
    std::string out =
        "apiVersion: worker.gpustack.ai/v1\n"
        "kind: ModelDeployment\n"
        "metadata: {name: md, namespace: ns}\n"
        "spec:\n"
        "  model: {name: m}\n"
        "  engine: {name: " +
        std::string(engine) + ", version: \"1\"}\n";
    if (!router.empty()) {
        out += "  router: " + std::string(router) + "\n";
    }
    out += "  roles: " + std::string(roles) + "\n";
    out += extra;
    return out;
}

std::string with_spec(std::string_view spec) {
    return "apiVersion: worker.gpustack.ai/v1\nkind: ModelDeployment\n"
           "metadata: {name: md, namespace: ns}\nspec:\n" +
           std::string(spec);
}

rules::Plan plan_of(const std::string& yaml) {
    auto documents = inputs::parse_documents(yaml, "test").value();
    rules::InstanceTypes types;
    inputs::collect_instance_types(documents, types);
    const auto decoded = rules::decode_model_deployment(documents.back().value);
    static const auto data = rules::embedded_rule_data();
    return rules::plan_mutations(decoded.model, data, &types);
}

std::string instance_type(std::string_view name, std::string_view manufacturer) {
    return "kind: InstanceType\nmetadata: {name: " + std::string(name) +
           "}\nstatus: {detail: {manufacturer: \"" + std::string(manufacturer) + "\"}}\n---\n";
}

}  // namespace mdadmit::test
