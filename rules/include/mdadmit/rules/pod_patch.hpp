#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "mdadmit/rules/plan.hpp"

namespace mdadmit::rules {

inline constexpr std::string_view candidate_label = "modeldeployment.gpustack.ai/router-candidate";

// Which ModelDeployment Pod this is, from the labels the operator puts on it.
struct PodIdentity {
    enum class Kind { engine, router } kind = Kind::engine;
    std::string
        deployment;    // app.kubernetes.io/instance (router Pods: or the router label's value)
    std::string role;  // app.kubernetes.io/component
    std::int64_t member_index = 0;
};

// nullopt for a Pod that is neither an engine member nor a router of a ModelDeployment.
std::optional<PodIdentity> identify_pod(const boost::json::value& pod);

// The containers flags go to; an empty name means the Pod's first container.
struct ContainerNames {
    std::string router;
    std::string engine = "engine";
    std::string routing_sidecar = "routing-sidecar";
};

// The RFC 6902 JSON Patch that brings `pod` in line with `plan`: the candidate label set or
// removed, operator-owned flags appended or their values corrected. Empty when nothing needs
// to change, so a Pod patched once is never patched again.
boost::json::array pod_patch(const boost::json::value& pod, const PodIdentity& identity,
                             const Plan& plan, const ContainerNames& containers = {});

// What the mutating webhook answers for a Pod of a ModelDeployment (its object as the cluster
// stores it): the plan of that object, as a patch of the Pod. The one composition of decode,
// plan and patch, shared by the server and the harness.
boost::json::array mutate_pod(const boost::json::value& pod, const PodIdentity& identity,
                              const boost::json::value& model_deployment, const RuleData& data,
                              const InstanceTypes* instance_types,
                              const ContainerNames& containers = {});

// A JSON Pointer reference token: "~" as "~0", "/" as "~1".
std::string escape_pointer_token(std::string_view token);

}  // namespace mdadmit::rules
