#pragma once

#include <boost/json/fwd.hpp>
#include <memory>
#include <optional>
#include <string_view>

#include "mdadmit/rules/enforcement.hpp"
#include "mdadmit/rules/finding.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/result.hpp"
#include "mdadmit/rules/rule_data.hpp"
#include "mdadmit/rules/schema_check.hpp"

namespace mdadmit::rules {

enum class Operation { create, update, remove, connect };

struct Review {
    const boost::json::value& object;
    const boost::json::value* old_object = nullptr;  // UPDATE only
    const InstanceTypes* instance_types = nullptr;   // null or empty: platforms unknown
    Operation operation = Operation::create;
    // The object's model, built from its JSON by a ModelBuilder, for a CREATE: an engine of
    // StructureCheck::decoder_only judges it and does not read `object`; an engine of the full
    // check reads `object`, which the schema needs, and passes over `model`.
    const ModelDeployment* model = nullptr;
};

enum class StructureCheck {
    // The full JSON Schema check (valijson): every type, enum, range and required field.
    full,
    // Only what the typed decoder notices on the fields the rules read; for callers whose
    // objects the API server has already checked against the CRD.
    decoder_only,
};

struct EngineOptions {
    StructureCheck structure_check = StructureCheck::full;
    // What each rule's findings do, over the data file's catalogue (e.g. `*=warn` while a
    // new rules.json is rolled out, or `encode-platform-unknown=deny` on a cluster whose
    // nodes all say what they are).
    Enforcement enforcement;
};

// The rule engine: pure, thread-safe after construction, never throws on bad input.
class Engine {
  public:
    static Result<Engine> create(RuleData data, EngineOptions options = {});
    static Engine with_embedded_data(EngineOptions options = {});

    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;
    ~Engine();

    Evaluation evaluate(const Review& review) const;
    const RuleData& data() const;
    const EngineOptions& options() const;
    // What a rule's findings do in this engine: the catalogue's action overridden by
    // options().enforcement. `rule_id` must be one of data().rules.
    Action action(std::string_view rule_id) const;

  private:
    struct State;
    explicit Engine(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace mdadmit::rules
