#include "mdadmit/rules/engine.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <memory_resource>
#include <unordered_set>

#include "mdadmit/rules/decode.hpp"
#include "rule_context.hpp"

namespace mdadmit::rules {

namespace {

// The rule that reports structural problems; every other rule is a semantic one.

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

// `*` entries first, then each rule's own, in the order given; an entry naming no rule is an
// error that suggests the closest id.
Result<bool> apply_enforcement(const Enforcement& enforcement,
                               FindingSink::Dispositions& dispositions) {
    for (const bool wildcard : {true, false}) {
        for (const auto& [rule, action] : enforcement.entries) {
            if ((rule == "*") != wildcard) {
                continue;
            }
            if (wildcard) {
                for (auto& disposition : dispositions) {
                    disposition.action = action;
                }
                continue;
            }
            const auto id = rule_id(rule);
            if (!id) {
                const auto suggestion = closest(
                    rule, std::vector<std::string>(rule_id_texts.begin(), rule_id_texts.end()));
                return Error{"--enforce: no rule \"" + rule + "\"" +
                             (suggestion ? " (did you mean " + *suggestion + "?)" : "") +
                             "; `mdadmit rules` lists them"};
            }
            dispositions[static_cast<std::size_t>(*id)].action = action;
        }
    }
    return true;
}

}  // namespace

struct Engine::State {
    RuleData data;
    EngineOptions options;
    SchemaCheck schema;
    std::vector<RuleDefinition> rules;
    FindingSink::Dispositions dispositions{};
};

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

Result<Engine> Engine::create(RuleData data, EngineOptions options) {
    // Every id of the built-in catalogue runs exactly once: as the structural check (schema)
    // or as one rule function. Failing here is a build defect, which the unit tests catch.
    std::array<int, rule_count> judges{};
    judges[static_cast<std::size_t>(RuleId::schema)] = 1;
    for (const auto& rule : all_rules()) {
        ++judges[static_cast<std::size_t>(rule.id)];
    }
    for (std::size_t i = 0; i < rule_count; ++i) {
        if (judges[i] != 1) {
            return Error{"rule \"" + std::string(rule_id_texts[i]) + "\" has " +
                         std::to_string(judges[i]) + " implementations, not one"};
        }
    }
    // The data file's catalogue must list every rule this build implements (RuleId, which is
    // generated from the built-in catalogue) and no other, so a rule cannot run without a
    // documented severity, nor be documented without running.
    for (const std::string_view id : rule_id_texts) {
        if (data.rule(id) == nullptr) {
            return Error{"rule data: rule \"" + std::string(id) +
                         "\" is implemented but missing from the rules list"};
        }
    }
    FindingSink::Dispositions dispositions{};
    for (const auto& info : data.rules) {
        const auto id = rule_id(info.id);
        if (!id) {
            return Error{"rule data: rule \"" + info.id + "\" is listed but not implemented"};
        }
        dispositions[static_cast<std::size_t>(*id)] = {
            info.severity,
            info.action.value_or(info.severity == Severity::deny ? Action::deny : Action::warn)};
    }
    auto enforced = apply_enforcement(options.enforcement, dispositions);
    if (!enforced) {
        return enforced.error();
    }
    // Rules run, and findings come, in the order of the data file's catalogue.
    std::vector<RuleDefinition> rules = all_rules();
    const auto position = [&](RuleId id) { return data.rule(id_text(id)) - data.rules.data(); };
    std::stable_sort(rules.begin(), rules.end(),
                     [&](const auto& a, const auto& b) { return position(a.id) < position(b.id); });
    auto state = std::make_unique<State>(
        State{std::move(data), options, SchemaCheck::embedded(), std::move(rules), dispositions});
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

Action Engine::action(std::string_view rule_id_text) const {
    const auto id = rule_id(rule_id_text);
    return id ? state_->dispositions[static_cast<std::size_t>(*id)].action : Action::off;
}

Evaluation Engine::evaluate(const Review& review) const {
    Evaluation evaluation;
    if (review.operation == Operation::remove || review.operation == Operation::connect) {
        return evaluation;
    }
    FindingSink sink(state_->dispositions, evaluation.findings);
    // The typed model, its facts and the rules' scratch space live in a per-thread arena for
    // the length of one evaluation: judging a typical object calls no allocator.
    // It is allocated on the thread's first evaluation, so other threads carry none.
    constexpr std::size_t arena_bytes = 256 * 1024;
    thread_local const auto arena = std::make_unique_for_overwrite<std::byte[]>(arena_bytes);
    std::pmr::monotonic_buffer_resource memory(arena.get(), arena_bytes);
    const bool full_check = state_->options.structure_check == StructureCheck::full;
    std::optional<Decoded> decoded;
    std::vector<DecodeProblem> structural;
    const ModelDeployment* model = full_check ? nullptr : review.model;
    if (model == nullptr) {
        decoded.emplace(decode_model_deployment(review.object, &memory));
        model = &decoded->model;
        structural = std::move(decoded->problems);
    }
    if (full_check) {
        structural = with_schema_problems(state_->schema.check(review.object), structural);
    }
    for (const auto& problem : structural) {
        sink.report(RuleId::schema, problem.path, problem.message,
                    "fix the field to match the ModelDeployment schema (manifests/crd/)");
    }
    // The semantic rules judge what is well-formed: the decoder left malformed values absent.
    DeploymentFacts facts = derive_facts(*model, state_->data, review.instance_types, &memory);
    RuleContext context{*model, facts, state_->data, review.object, &memory};
    std::optional<Decoded> old;
    std::optional<DeploymentFacts> old_facts;
    if (review.operation == Operation::update && review.old_object != nullptr) {
        old = decode_model_deployment(*review.old_object, &memory);
        old_facts = derive_facts(old->model, state_->data, review.instance_types, &memory);
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
    if (old && model->being_deleted && spec_unchanged(review.object, *review.old_object)) {
        for (auto& finding : evaluation.findings) {
            finding.severity = Severity::warn;
        }
    }
    return evaluation;
}

}  // namespace mdadmit::rules
