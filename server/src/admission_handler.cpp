#include "admission_handler.hpp"

#include <boost/json.hpp>

#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/limits.hpp"
#include "mdadmit/rules/plan.hpp"
#include "review_response.hpp"

namespace mdadmit::server {

namespace {

namespace json = boost::json;

constexpr std::string_view judged_group = "worker.gpustack.ai";
constexpr std::string_view judged_kind = "ModelDeployment";

std::string text_at(const json::object* object, std::string_view key) {
    if (object == nullptr) {
        return {};
    }
    const json::value* value = object->if_contains(key);
    return value != nullptr && value->is_string() ? std::string(value->get_string())
                                                  : std::string();
}

const json::object* object_at(const json::object* object, std::string_view key) {
    if (object == nullptr) {
        return nullptr;
    }
    const json::value* value = object->if_contains(key);
    return value != nullptr && value->is_object() ? &value->get_object() : nullptr;
}

rules::Operation operation_of(std::string_view text) {
    if (text == "UPDATE")
        return rules::Operation::update;
    if (text == "DELETE")
        return rules::Operation::remove;
    if (text == "CONNECT")
        return rules::Operation::connect;
    return rules::Operation::create;
}

AdmissionOutcome http_error(int status, std::string_view reason, std::string message) {
    AdmissionOutcome out;
    out.http_status = status;
    out.body = status_body(status, reason, message);
    return out;
}

}  // namespace

AdmissionHandler::AdmissionHandler(Judge judge,
                                   std::shared_ptr<const InstanceTypeStore> instance_types,
                                   Metrics& metrics, MutationSetup mutation)
    : judge_(std::move(judge)),
      instance_types_(std::move(instance_types)),
      metrics_(metrics),
      mutation_(std::move(mutation)) {}

AdmissionHandler::AdmissionHandler(const rules::Engine& engine,
                                   std::shared_ptr<const InstanceTypeStore> instance_types,
                                   Metrics& metrics, MutationSetup mutation)
    : AdmissionHandler([&engine](const rules::Review& review) { return engine.evaluate(review); },
                       std::move(instance_types), metrics, std::move(mutation)) {}

AdmissionOutcome AdmissionHandler::handle(AdmissionPath path, std::string_view body,
                                          Clock::time_point deadline) const {
    // One request's JSON lives in a per-thread arena: no allocator calls while parsing.
    thread_local std::array<unsigned char, 64 * 1024> arena;
    json::monotonic_resource resource(arena.data(), arena.size());
    json::parse_options options;
    options.max_depth = rules::limits::max_json_depth;
    boost::system::error_code ec;
    const json::value document = json::parse(body, ec, &resource, options);
    if (ec) {
        return http_error(400, "BadRequest", "request body is not valid JSON: " + ec.message());
    }
    const json::object* review = document.if_object();
    const std::string api_version = text_at(review, "apiVersion");
    if (review == nullptr || text_at(review, "kind") != "AdmissionReview" ||
        (api_version != "admission.k8s.io/v1" && api_version != "admission.k8s.io/v1beta1")) {
        return http_error(400, "BadRequest",
                          "expected an AdmissionReview of admission.k8s.io/v1 or v1beta1");
    }
    const json::object* request = object_at(review, "request");
    if (request == nullptr) {
        return http_error(400, "BadRequest", "the AdmissionReview has no request");
    }
    AdmissionOutcome out;
    out.uid = text_at(request, "uid");
    if (out.uid.empty()) {
        return http_error(400, "BadRequest", "request.uid is missing");
    }
    const ReviewEnvelope envelope{api_version, out.uid};
    const json::object* kind = object_at(request, "kind");
    const json::object* user = object_at(request, "userInfo");
    const json::value* object = request->if_contains("object");
    out.operation = text_at(request, "operation");
    out.kind = text_at(kind, "kind");
    out.namespace_name = text_at(request, "namespace");
    out.name = text_at(request, "name");
    if (out.name.empty() && object != nullptr) {
        out.name = text_at(object_at(object->if_object(), "metadata"), "name");
    }
    out.user = text_at(user, "username");
    const json::value* dry_run = request->if_contains("dryRun");
    out.dry_run = dry_run != nullptr && dry_run->is_bool() && dry_run->get_bool();

    const rules::Operation operation = operation_of(out.operation);
    if (path == AdmissionPath::mutate) {
        if (text_at(kind, "group").empty() && out.kind == "Pod" &&
            operation == rules::Operation::create) {
            mutate_pod(envelope, *request, deadline, out);
        } else {
            out.verdict = "allowed";
            out.body = allowed_review(envelope);
        }
        return out;
    }
    const bool judged = text_at(kind, "group") == judged_group && out.kind == judged_kind;
    if (!judged || operation == rules::Operation::remove ||
        operation == rules::Operation::connect) {
        if (!judged) {
            metrics_.count_unjudged_kind(text_at(kind, "group") + "/" + out.kind);
        }
        out.verdict = "allowed";
        out.body = allowed_review(envelope);
        return out;
    }
    if (Clock::now() >= deadline) {
        out.verdict = "error";
        out.body = failed_review(envelope, 504, "Timeout",
                                 "the request's deadline passed before it was judged");
        return out;
    }
    const auto types = instance_types_ != nullptr ? instance_types_->current() : nullptr;
    try {
        static const json::value absent;
        const json::value* old_object = request->if_contains("oldObject");
        const rules::Evaluation evaluation =
            judge_({object != nullptr ? *object : absent,
                    old_object != nullptr && !old_object->is_null() ? old_object : nullptr,
                    types.get(), operation});
        for (const auto& finding : evaluation.findings) {
            out.rule_ids.push_back(finding.rule);
            metrics_.count_finding(finding.rule, rules::to_string(finding.severity));
        }
        out.verdict = evaluation.allowed() ? "allowed" : "denied";
        out.body =
            verdict_review(envelope, {out.name, std::string(judged_group), out.kind}, evaluation);
    } catch (const std::exception& e) {
        metrics_.count_panic();
        out.verdict = "error";
        out.body = failed_review(envelope, 500, "InternalError",
                                 std::string("internal error while judging: ") + e.what());
    }
    return out;
}

void AdmissionHandler::mutate_pod(const ReviewEnvelope& envelope, const json::object& request,
                                  Clock::time_point deadline, AdmissionOutcome& out) const {
    static const json::value absent;
    const json::value* pod = request.if_contains("object");
    const auto identity = rules::identify_pod(pod != nullptr ? *pod : absent);
    out.verdict = "allowed";
    if (!identity) {
        // Not a ModelDeployment Pod: the objectSelector should not have sent it.
        out.body = allowed_review(envelope);
        return;
    }
    const std::string key = out.namespace_name + "/" + identity->deployment;
    Lookup lookup{Lookup::Status::unreadable, {}, "no source of ModelDeployments is configured"};
    if (mutation_.cluster != nullptr && mutation_.data != nullptr) {
        lookup =
            mutation_.cluster->model_deployment(out.namespace_name, identity->deployment, deadline);
    }
    metrics_.count_lookup(to_string(lookup.status));
    if (lookup.status != Lookup::Status::found) {
        const std::string problem =
            lookup.status == Lookup::Status::not_found
                ? "ModelDeployment " + key + " not found"
                : "ModelDeployment " + key + " could not be read (" + lookup.error + ")";
        if (mutation_.deny_when_unreadable) {
            out.verdict = "error";
            out.body = failed_review(envelope, 503, "ServiceUnavailable", problem);
        } else {
            out.body =
                allowed_review(envelope, {"mdadmit: " + problem + "; Pod admitted unchanged"});
        }
        return;
    }
    const auto types = instance_types_ != nullptr ? instance_types_->current() : nullptr;
    const rules::Decoded decoded = rules::decode_model_deployment(lookup.object);
    const rules::Plan plan = rules::plan_mutations(decoded.model, *mutation_.data, types.get());
    const json::array patch = rules::pod_patch(*pod, *identity, plan, mutation_.containers);
    out.body =
        patch.empty() ? allowed_review(envelope) : patch_review(envelope, json::serialize(patch));
}

}  // namespace mdadmit::server
