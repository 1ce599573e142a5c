#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/finding.hpp"

namespace mdadmit::admission {

// What the response echoes from the request; views of texts the caller keeps.
struct ReviewEnvelope {
    std::string_view api_version;  // admission.k8s.io/v1 or v1beta1, as the request had it
    std::string_view uid;
};

// The object a denial is about, for status.details.
struct ObjectIdentity {
    std::string_view name;
    std::string_view group;
    std::string_view kind;
};

// verdict_review, allowed_review and failed_review write into `storage`, whose contents are
// discarded: passing the memory of an answer already sent lets the next one be written without
// allocating.

// An AdmissionReview response: allowed, or denied with code 422 and one cause per deny
// finding; warn findings become `warnings`. Never carries a patch.
std::string verdict_review(const ReviewEnvelope& envelope, const ObjectIdentity& object,
                           const rules::Evaluation& evaluation, std::string storage = {});

// allowed: true with no warnings (DELETE, CONNECT, kinds this webhook does not judge).
std::string allowed_review(const ReviewEnvelope& envelope,
                           const std::vector<std::string>& warnings = {}, std::string storage = {});

// allowed: true with a JSON Patch (patchType JSONPatch, the patch base64-encoded).
std::string patch_review(const ReviewEnvelope& envelope, std::string_view json_patch);

// allowed: false with the given code and message (500 for an internal error, 504 when the
// apiserver's deadline passed before judging).
std::string failed_review(const ReviewEnvelope& envelope, int code, std::string_view reason,
                          std::string_view message, std::string storage = {});

// The warnings of an evaluation as the apiserver shows them: "rule-id: field: message", or
// "rule-id (would deny): field: message" for a deny finding staged enforcement demoted;
// without control characters, deduplicated, at most 256 bytes each.
std::vector<std::string> warning_lines(const rules::Evaluation& evaluation);

// A Kubernetes Status body for an HTTP-level error (400, 404, 405, 413, 415).
std::string status_body(int code, std::string_view reason, std::string_view message);

}  // namespace mdadmit::admission
