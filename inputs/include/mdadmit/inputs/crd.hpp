#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace mdadmit::inputs {

// The ModelDeployment CustomResourceDefinition (manifests/crd/) built from the engine's JSON
// Schema, so the CRD a cluster installs and the structural check the harness runs are one
// source. Both served versions (v1, the storage version, and v1alpha1) share the schema.
std::string crd_yaml(const boost::json::value& schema);

}  // namespace mdadmit::inputs
