#pragma once

#include <array>
#include <boost/json/fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/facts.hpp"
#include "rule_id.hpp"

namespace mdadmit::rules {

// What every semantic rule reads: the typed object, the facts derived from it once, and the
// rule data; and where a rule keeps its scratch space (released when the evaluation ends).
struct RuleContext {
    const ModelDeployment& model;
    const DeploymentFacts& facts;
    const RuleData& data;
    const boost::json::value& object;
    Memory memory;
    // UPDATE only: the object as stored, raw, decoded and with its facts; null otherwise.
    const boost::json::value* old_object = nullptr;
    const ModelDeployment* old_model = nullptr;
    const DeploymentFacts* old_facts = nullptr;

    // UPDATE only: the facts of the stored role of that name, which the ratchets compare
    // against; null on CREATE and for a role the update adds.
    const RoleFacts* stored(std::string_view role_name) const;
};

// Whether an UPDATE leaves spec exactly as it was (metadata-only: finalizers, labels).
bool spec_unchanged(const boost::json::value& object, const boost::json::value& old_object);

// Collects findings; the severity of each comes from the rule data, not from the rule.
class FindingSink {
  public:
    // What one rule's findings become: its catalogue severity, and its action after
    // staged enforcement.
    struct Disposition {
        Severity severity = Severity::deny;
        Action action = Action::deny;
    };
    using Dispositions = std::array<Disposition, rule_count>;  // by RuleId

    FindingSink(const Dispositions& dispositions, std::vector<Finding>& out)
        : dispositions_(dispositions), out_(out) {}

    void report(RuleId rule, std::string path, std::string message, std::string hint);

  private:
    const Dispositions& dispositions_;
    std::vector<Finding>& out_;
};

struct RuleDefinition {
    RuleId id;
    void (*judge)(const RuleContext&, FindingSink&);
};

std::span<const RuleDefinition> routing_rules();
std::span<const RuleDefinition> encode_rules();
std::span<const RuleDefinition> port_rules();
std::span<const RuleDefinition> role_rules();
std::span<const RuleDefinition> engine_arg_rules();
std::span<const RuleDefinition> elastic_ep_rules();
std::span<const RuleDefinition> access_rules();
std::span<const RuleDefinition> instance_type_rules();
std::span<const RuleDefinition> update_rules();

// Shared wording helpers.
// `text` in back-quotes, the way messages quote a flag or a value.
std::string code(std::string_view text);
std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view last_separator);
// The candidate closest to `value` by edit distance, if it is close enough to be a typo.
std::optional<std::string> closest(std::string_view value,
                                   const std::vector<std::string>& candidates);

}  // namespace mdadmit::rules
