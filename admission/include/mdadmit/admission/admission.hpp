#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mdadmit/admission/review.hpp"
#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/pod_patch.hpp"

namespace mdadmit::admission {

using Clock = std::chrono::steady_clock;

enum class AdmissionPath { validate, mutate };

// The answer to "what is ModelDeployment namespace/name?".
struct Lookup {
    enum class Status { found, not_found, unreadable } status = Status::not_found;
    std::shared_ptr<const boost::json::value> object;  // when found; shared with a cache
    std::string error;                                 // when unreadable
};

std::string_view to_string(Lookup::Status status);

// One finding as the server counts it.
struct CountedFinding {
    std::string_view rule;  // an id of the rule catalogue
    rules::Severity severity = rules::Severity::deny;
    bool enforced = true;  // false: a deny demoted to a warning by staged enforcement
    bool operator==(const CountedFinding&) const = default;
};

// What the server counts of one answer; admission itself counts nothing. Every text here is
// from a closed set, whatever the request said, so that no client can grow the metrics.
struct Counts {
    std::vector<CountedFinding> findings;
    // CREATE, UPDATE, DELETE, CONNECT or other; "" when the request was not a review.
    std::string_view operation;
    // A review this webhook does not judge: `/Pod`, `worker.gpustack.ai/ModelDeployment` (of an
    // unjudged version), `worker.gpustack.ai/InstanceType`, or `other`; "" when judged.
    std::string_view unjudged_kind;
    std::optional<Lookup::Status> lookup;  // a Pod's ModelDeployment lookup
    bool panic = false;                    // judging threw
    bool operator==(const Counts&) const = default;
};

// The answer to one admission request, and what the decision log and metrics need of it.
struct Outcome {
    int http_status = 200;
    std::string body;  // an AdmissionReview, or a Status for an HTTP-level error
    // For the decision log line.
    std::string uid;
    std::string operation;
    std::string kind;
    std::string namespace_name;
    std::string name;
    std::string user;
    std::string verdict;  // allowed, denied, error; "" for an HTTP-level error
    bool dry_run = false;
    Counts counts;  // its findings are every finding, in order
    bool operator==(const Outcome&) const = default;
};

// A Pod on /mutate waiting for its ModelDeployment: what to look up, and the answer so far.
struct PendingPod {
    std::string namespace_name;
    std::string deployment;
    boost::json::value pod;
    rules::PodIdentity identity;
    std::string api_version;  // of the request; its uid is the outcome's
    Outcome outcome;
};

// What the mutating path writes into, and what it does when a ModelDeployment cannot be read.
struct MutationOptions {
    rules::ContainerNames containers;
    bool deny_when_unreadable = false;  // default: admit unchanged with a warning
};

// Judges one decoded object; the rule engine's evaluate in production.
using Judge = std::function<rules::Evaluation(const rules::Review&)>;

// AdmissionReviews in, answers out: pure (no I/O, no counters; the only clock read compares
// against the deadline it is given) and thread-safe. A Pod on /mutate is answered in two
// steps, so the caller can look its ModelDeployment up without holding a thread.
class Admission {
  public:
    // Judges with `engine`, which must outlive the Admission. Under the decoder-only check a
    // ModelDeployment's CREATE is judged from a model built as its review is parsed, without a
    // DOM of the object; the answer is the same (docs/decisions.md).
    explicit Admission(const rules::Engine& engine, MutationOptions mutation = {});
    // Judges with `judge`, which is given the object's DOM.
    Admission(Judge judge, const rules::RuleData& data, MutationOptions mutation = {});

    // The answer to a review, or for a Pod on /mutate the ModelDeployment it needs first.
    // The answer is written into `storage`'s memory (its contents are discarded): a caller
    // that hands back each outcome once it is done with it answers an admitted review
    // without allocating.
    std::variant<Outcome, PendingPod> admit(AdmissionPath path, std::string_view body,
                                            const rules::InstanceTypes* instance_types,
                                            Clock::time_point deadline, Outcome storage = {}) const;
    // The Pod's answer once its ModelDeployment has been looked up.
    Outcome complete(PendingPod pending, const Lookup& lookup,
                     const rules::InstanceTypes* instance_types) const;

  private:
    Admission(Judge judge, const rules::RuleData& data, MutationOptions mutation,
              bool judges_built_models);

    Judge judge_;
    const rules::RuleData& data_;
    MutationOptions mutation_;
    bool judges_built_models_ = false;  // the judge takes Review::model for a CREATE
};

}  // namespace mdadmit::admission
