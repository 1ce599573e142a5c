#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mdadmit::rules {

enum class Severity { deny, warn };

std::string_view to_string(Severity severity);

// One judgement of one rule about one field of the object.
struct Finding {
    // Stable kebab-case id of the catalogue, e.g. "port-uniformity": a view of static text,
    // which outlives every evaluation and what is counted of it.
    std::string_view rule;
    Severity severity;    // deny blocks admission, warn is reported only
    std::string path;     // JSON field path, e.g. "spec.roles[1].extraArgs[3]"; "" is the object
    std::string message;  // what is wrong, with the offending value
    std::string hint;     // how to fix it
    // false: the rule refuses such objects, but staged enforcement (its action is warn) made
    // this finding a warning; it says the object would have been refused.
    bool enforced = true;
    bool operator==(const Finding&) const = default;
};

// Every finding of one evaluation, in rule order; all are reported, never just the first.
struct Evaluation {
    std::vector<Finding> findings;

    bool allowed() const;
    std::vector<const Finding*> with_severity(Severity severity) const;
};

}  // namespace mdadmit::rules
