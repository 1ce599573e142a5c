// Compiled by ctest, not linked: a rule names its id as RuleId::RULE, so an id the catalogue
// (rules/data/rules.json) does not list is a compile error, not a finding under a wrong id.
#include "rule_id.hpp"

constexpr mdadmit::rules::RuleId named = mdadmit::rules::RuleId::RULE;
static_assert(!mdadmit::rules::id_text(named).empty());
