#include "mdadmit/rules/engine.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <unordered_set>

#include "mdadmit/rules/decode.hpp"
#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

// The rule that reports structural problems; every other rule is a semantic one.
constexpr std::string_view schema_rule = "schema";

std::vector<RuleDefinition> all_rules() {
    std::vector<RuleDefinition> out;
    for (auto group :
         {routing_rules(), encode_rules(), port_rules(), role_rules(), engine_arg_rules(),
          elastic_ep_rules(), access_rules(), instance_type_rules(), update_rules()}) {
        out.insert(out.end(), group.begin(), group.end());
    }
    return out;
}

// The schema's findings, then any the decoder found on a field the schema passed: the CRD's
// quantity pattern admits strings Kubernetes cannot parse (`"1e1.5"`), which only the decoder
// refuses.
std::vector<DecodeProblem> with_schema_problems(std::vector<DecodeProblem> schema,
                                                const std::vector<DecodeProblem>& decoder) {
    std::unordered_set<std::string> reported;
    for (const auto& problem : schema) {
        reported.insert(problem.path);
    }
    for (const auto& problem : decoder) {
        if (reported.count(problem.path) == 0) {
            schema.push_back(problem);
        }
    }
    return schema;
}

}  // namespace

struct Engine::State {
    RuleData data;
    EngineOptions options;
    SchemaCheck schema;
    std::vector<RuleDefinition> rules;
    std::vector<std::pair<std::string, Severity>> severities;
};

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

Result<Engine> Engine::create(RuleData data, EngineOptions options) {
    std::vector<RuleDefinition> rules = all_rules();
    // The data file's catalogue and the compiled rules must name the same ids, so a rule
    // cannot run without a documented severity, nor be documented without running.
    std::set<std::string> implemented{std::string(schema_rule)};
    for (const auto& rule : rules) {
        implemented.insert(std::string(rule.id));
        if (data.rule(rule.id) == nullptr) {
            return Error{"rule data: rule \"" + std::string(rule.id) +
                         "\" is implemented but missing from the rules list"};
        }
    }
    for (const auto& info : data.rules) {
        if (implemented.count(info.id) == 0) {
            return Error{"rule data: rule \"" + info.id + "\" is listed but not implemented"};
        }
    }
    // Rules run, and findings come, in the order of the data file's catalogue.
    const auto position = [&](std::string_view id) { return data.rule(id) - data.rules.data(); };
    std::stable_sort(rules.begin(), rules.end(),
                     [&](const auto& a, const auto& b) { return position(a.id) < position(b.id); });
    auto state = std::make_unique<State>(
        State{std::move(data), options, SchemaCheck::embedded(), std::move(rules), {}});
    for (const auto& info : state->data.rules) {
        Severity severity = info.severity;
        if (info.id == "encode-platform-unknown" && options.encode_platform_unknown_severity) {
            severity = *options.encode_platform_unknown_severity;
        }
        state->severities.emplace_back(info.id, severity);
    }
    return Engine(std::move(state));
}

Engine Engine::with_embedded_data(EngineOptions options) {
    auto engine = create(embedded_rule_data(), options);
    // The built-in data is checked by the unit tests; failing here is a build defect.
    if (!engine) {
        std::abort();
    }
    return std::move(engine).value();
}

const RuleData& Engine::data() const {
    return state_->data;
}

const EngineOptions& Engine::options() const {
    return state_->options;
}

Evaluation Engine::evaluate(const Review& review) const {
    Evaluation evaluation;
    if (review.operation == Operation::remove || review.operation == Operation::connect) {
        return evaluation;
    }
    FindingSink sink(state_->severities, evaluation.findings);
    Decoded decoded = decode_model_deployment(review.object);
    std::vector<DecodeProblem> structural = std::move(decoded.problems);
    if (state_->options.structure_check == StructureCheck::full) {
        structural = with_schema_problems(state_->schema.check(review.object), structural);
    }
    for (const auto& problem : structural) {
        sink.report(schema_rule, problem.path, problem.message,
                    "fix the field to match the ModelDeployment schema (manifests/crd/)");
    }
    // The semantic rules judge what is well-formed: the decoder left malformed values absent.
    DeploymentFacts facts = derive_facts(decoded.model, state_->data, review.instance_types);
    RuleContext context{decoded.model, facts, state_->data, review.object};
    std::optional<Decoded> old;
    std::optional<DeploymentFacts> old_facts;
    if (review.operation == Operation::update && review.old_object != nullptr) {
        old = decode_model_deployment(*review.old_object);
        old_facts = derive_facts(old->model, state_->data, review.instance_types);
        context.old_object = review.old_object;
        context.old_model = &old->model;
        context.old_facts = &*old_facts;
    }
    for (const auto& rule : state_->rules) {
        rule.judge(context, sink);
    }
    // An UPDATE of an object being deleted that leaves its spec as it was (its finalizers
    // being removed) is judged but never blocked: an object admitted before a rule existed
    // must still be able to finish terminating.
    if (old && decoded.model.being_deleted && spec_unchanged(review.object, *review.old_object)) {
        for (auto& finding : evaluation.findings) {
            finding.severity = Severity::warn;
        }
    }
    return evaluation;
}

}  // namespace mdadmit::rules
