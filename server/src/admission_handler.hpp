#pragma once

#include <boost/json/fwd.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_view.hpp"
#include "instance_type_store.hpp"
#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/pod_patch.hpp"
#include "metrics.hpp"
#include "review_response.hpp"

namespace mdadmit::server {

using Clock = std::chrono::steady_clock;

enum class AdmissionPath { validate, mutate };

// The answer to one admission request, and what the decision log and metrics need of it.
struct AdmissionOutcome {
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
    std::vector<std::string> rule_ids;  // of every finding, in order
};

// What the mutating path needs: where ModelDeployments are read from, the rule data whose
// plan it applies, the container names, and what to do when the object cannot be read.
struct MutationSetup {
    const ClusterView* cluster = nullptr;  // null: Pods are admitted unchanged, with a warning
    const rules::RuleData* data = nullptr;
    rules::ContainerNames containers;
    bool deny_when_unreadable = false;  // default: admit unchanged with a warning
};

// Judges one decoded object; the rule engine's evaluate in the server.
using Judge = std::function<rules::Evaluation(const rules::Review&)>;

// Judges AdmissionReview requests with the rule engine. Pure apart from the metrics it
// counts: bytes in, bytes out, no I/O; thread-safe.
class AdmissionHandler {
  public:
    AdmissionHandler(Judge judge, std::shared_ptr<const InstanceTypeStore> instance_types,
                     Metrics& metrics, MutationSetup mutation = {});
    // Judges with `engine`, which must outlive the handler.
    AdmissionHandler(const rules::Engine& engine,
                     std::shared_ptr<const InstanceTypeStore> instance_types, Metrics& metrics,
                     MutationSetup mutation = {});

    // `deadline` is when the apiserver stops waiting; past it nothing is judged.
    AdmissionOutcome handle(AdmissionPath path, std::string_view body,
                            Clock::time_point deadline) const;

  private:
    void mutate_pod(const ReviewEnvelope& envelope, const boost::json::object& request,
                    Clock::time_point deadline, AdmissionOutcome& out) const;

    Judge judge_;
    std::shared_ptr<const InstanceTypeStore> instance_types_;
    Metrics& metrics_;
    MutationSetup mutation_;
};

}  // namespace mdadmit::server
