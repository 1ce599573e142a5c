#include "mdadmit/admission/admission.hpp"

#include <array>
#include <boost/json.hpp>
#include <memory>
#include <memory_resource>
#include <optional>

#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/json_input.hpp"
#include "mdadmit/rules/limits.hpp"
#include "mdadmit/rules/model_builder.hpp"
#include "review_parser.hpp"

namespace mdadmit::admission {

namespace {

namespace json = boost::json;

constexpr std::string_view judged_group = "worker.gpustack.ai";
constexpr std::size_t arena_bytes = 64 * 1024;
// A typical object's model takes a few KiB: its texts, and lists of roles, flags and ports.
constexpr std::size_t model_arena_bytes = 32 * 1024;
constexpr std::string_view judged_kind = "ModelDeployment";

// A body up to this size is parsed by its thread's kept parser; a larger one by a parser of its
// own. A 64 KiB body holds at most 32,768 values: 512 KiB of the parser's stack at most.
constexpr std::size_t kept_parser_body_bytes = 64 * 1024;
// The stack a parser of its own starts on, as Boost.JSON's json::parse gives its parser.
constexpr std::size_t own_parser_stack_bytes = 4096;

json::parse_options review_parse_options() {
    json::parse_options options;
    options.max_depth = rules::limits::max_json_depth;
    return options;
}

// A review parsed: its DOM, and whether request.object went to the builder instead.
struct Parsed {
    json::value document;
    bool diverted = false;
};

// Parses a request body into `memory`, or says in `problem` why it is not a JSON document.
// With a builder, the object of a CREATE goes to it rather than into the DOM.
Parsed parse_with(ReviewParser& parser, std::string_view body, json::storage_ptr memory,
                  rules::ModelBuilder* builder, std::string& problem) {
    // The parser must not hold on to this request's memory, however parsing ends.
    struct Release {
        ReviewParser& parser;
        ~Release() { parser.reset(json::storage_ptr()); }
    } const release{parser};
    parser.reset(std::move(memory));
    parser.divert_created_object(builder);
    boost::system::error_code ec;
    Parsed out{parser.write(body, ec), parser.diverted()};
    if (ec) {
        problem = parser.non_finite() ? std::string(rules::non_finite_number) : ec.message();
    }
    return out;
}

// The parser is kept per thread, as the arena is: the stack of values it grows for a review of
// many members (ten roles of 100 flags) is kept for the next review, so that parsing calls no
// allocator once warmed up. A larger body gets a parser of its own, so that no thread keeps the
// stack of a 3 MiB object.
Parsed parse_body(std::string_view body, json::storage_ptr memory, rules::ModelBuilder* builder,
                  std::string& problem) {
    if (body.size() > kept_parser_body_bytes) {
        std::array<unsigned char, own_parser_stack_bytes> stack;
        ReviewParser own(review_parse_options(), stack.data(), stack.size());
        return parse_with(own, body, std::move(memory), builder, problem);
    }
    thread_local ReviewParser kept(review_parse_options());
    return parse_with(kept, body, std::move(memory), builder, problem);
}

std::string_view text_of(const json::value& value) {
    return value.is_string() ? std::string_view(value.get_string()) : std::string_view();
}

std::string_view text_at(const json::object* object, std::string_view key) {
    const json::value* value = object != nullptr ? object->if_contains(key) : nullptr;
    return value != nullptr ? text_of(*value) : std::string_view();
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

// What admission reads of an AdmissionReview's request, found in one pass over its members
// rather than looked up one by one. A DOM keeps one member of each key, so the pass finds what
// the lookups would.
struct RequestMembers {
    std::string_view uid;
    std::string_view operation;
    std::string_view namespace_name;
    std::string_view name;
    const json::object* kind = nullptr;       // request.kind: group, version and kind
    const json::object* user_info = nullptr;  // request.userInfo
    const json::value* object = nullptr;
    const json::value* old_object = nullptr;
    bool dry_run = false;
};

RequestMembers members_of(const json::object& request) {
    RequestMembers out;
    for (const json::key_value_pair& member : request) {
        const std::string_view key = member.key();
        const json::value& value = member.value();
        if (key == "uid") {
            out.uid = text_of(value);
        } else if (key == "operation") {
            out.operation = text_of(value);
        } else if (key == "namespace") {
            out.namespace_name = text_of(value);
        } else if (key == "name") {
            out.name = text_of(value);
        } else if (key == "kind") {
            out.kind = value.if_object();
        } else if (key == "userInfo") {
            out.user_info = value.if_object();
        } else if (key == "object") {
            out.object = &value;
        } else if (key == "oldObject") {
            out.old_object = &value;
        } else if (key == "dryRun") {
            out.dry_run = value.is_bool() && value.get_bool();
        }
    }
    return out;
}

// The members of the document's request; nullopt when it has no request object.
std::optional<RequestMembers> request_members(const json::value& document) {
    const json::object* request = object_at(document.if_object(), "request");
    return request == nullptr ? std::nullopt : std::optional(members_of(*request));
}

// The model built as the review was parsed, when the review is a ModelDeployment's CREATE whose
// object went whole to the builder; nullopt when the object must be read from a DOM.
std::optional<rules::ModelDeployment> built_model(const std::optional<RequestMembers>& members,
                                                  rules::ModelBuilder& builder) {
    if (!members || members->object != nullptr || members->operation != "CREATE" ||
        text_at(members->kind, "group") != judged_group ||
        text_at(members->kind, "kind") != judged_kind) {
        return std::nullopt;
    }
    return builder.finish();
}

std::string_view operation_label(std::string_view operation) {
    for (const std::string_view known : {"CREATE", "UPDATE", "DELETE", "CONNECT"}) {
        if (operation == known) {
            return known;
        }
    }
    return "other";
}

// The kinds a webhook configuration might route here by mistake keep their name; any other
// is `other`.
std::string_view unjudged_kind_label(std::string_view group, std::string_view kind) {
    for (const std::string_view known :
         {"/Pod", "worker.gpustack.ai/ModelDeployment", "worker.gpustack.ai/InstanceType"}) {
        const std::size_t slash = known.find('/');
        if (group == known.substr(0, slash) && kind == known.substr(slash + 1)) {
            return known;
        }
    }
    return "other";
}

// What an outcome's memory is kept for the next answer up to: an answer of a few findings, and
// names as long as Kubernetes allows. A request's fields can be as long as its body (7 MiB);
// memory grown for one of those is given back, not held by an idle connection.
constexpr std::size_t kept_body_bytes = 64 * 1024;
constexpr std::size_t kept_field_bytes = 1024;
constexpr std::size_t kept_findings = 256;

// An empty outcome with the memory of `used`'s texts and list, where they are not oversized.
Outcome emptied(Outcome used) {
    Outcome out;
    for (const auto member : {&Outcome::body, &Outcome::uid, &Outcome::operation, &Outcome::kind,
                              &Outcome::namespace_name, &Outcome::name, &Outcome::user}) {
        std::string& memory = used.*member;
        if (memory.capacity() <= (member == &Outcome::body ? kept_body_bytes : kept_field_bytes)) {
            memory.clear();
            (out.*member).swap(memory);
        }
    }
    if (used.counts.findings.capacity() <= kept_findings) {
        used.counts.findings.clear();
        out.counts.findings.swap(used.counts.findings);
    }
    return out;
}

Outcome http_error(int status, std::string_view reason, std::string message) {
    Outcome out;
    out.http_status = status;
    out.body = status_body(status, reason, message);
    return out;
}

}  // namespace

std::string_view to_string(Lookup::Status status) {
    switch (status) {
        case Lookup::Status::found:
            return "found";
        case Lookup::Status::not_found:
            return "not_found";
        case Lookup::Status::unreadable:
            break;
    }
    return "error";
}

Admission::Admission(const rules::Engine& engine, MutationOptions mutation)
    : Admission([&engine](const rules::Review& review) { return engine.evaluate(review); },
                engine.data(), std::move(mutation),
                engine.options().structure_check == rules::StructureCheck::decoder_only) {}

Admission::Admission(Judge judge, const rules::RuleData& data, MutationOptions mutation)
    : Admission(std::move(judge), data, std::move(mutation), false) {}

Admission::Admission(Judge judge, const rules::RuleData& data, MutationOptions mutation,
                     bool judges_built_models)
    : judge_(std::move(judge)),
      data_(data),
      mutation_(std::move(mutation)),
      judges_built_models_(judges_built_models) {}

std::variant<Outcome, PendingPod> Admission::admit(AdmissionPath path, std::string_view body,
                                                   const rules::InstanceTypes* instance_types,
                                                   Clock::time_point deadline,
                                                   Outcome storage) const {
    // One request's JSON lives in a per-thread arena, allocated on the thread's first request
    // (and never touched by threads that judge nothing): no allocator calls while parsing.
    thread_local const auto arena = std::make_unique_for_overwrite<unsigned char[]>(arena_bytes);
    json::monotonic_resource resource(arena.get(), arena_bytes);
    // A ModelDeployment's CREATE is built into its model as the review is parsed, when the
    // judge takes built models: no DOM of the object. The model's texts and lists live in a
    // per-thread arena of their own, allocated on the thread's first such review.
    std::optional<std::pmr::monotonic_buffer_resource> model_memory;
    std::optional<rules::ModelBuilder> builder;
    if (judges_built_models_ && path == AdmissionPath::validate) {
        thread_local const auto model_arena =
            std::make_unique_for_overwrite<std::byte[]>(model_arena_bytes);
        builder.emplace(&model_memory.emplace(model_arena.get(), model_arena_bytes), body);
    }
    std::string problem;
    Parsed parsed = parse_body(body, &resource, builder ? &*builder : nullptr, problem);
    std::optional<RequestMembers> members = request_members(parsed.document);
    std::optional<rules::ModelDeployment> built;
    if (problem.empty() && parsed.diverted) {
        built = built_model(members, *builder);
        if (!built) {
            // Not a ModelDeployment's CREATE after all, or an object the builder gave up on
            // (which the decoder reports on): read as any other review.
            parsed = parse_body(body, &resource, nullptr, problem);
            members = request_members(parsed.document);
        }
    }
    const json::value& document = parsed.document;
    if (!problem.empty()) {
        return http_error(400, "BadRequest", "request body is not valid JSON: " + problem);
    }
    const json::object* review = document.if_object();
    const std::string_view api_version = text_at(review, "apiVersion");
    if (review == nullptr || text_at(review, "kind") != "AdmissionReview" ||
        (api_version != "admission.k8s.io/v1" && api_version != "admission.k8s.io/v1beta1")) {
        return http_error(400, "BadRequest",
                          "expected an AdmissionReview of admission.k8s.io/v1 or v1beta1");
    }
    if (!members) {
        return http_error(400, "BadRequest", "the AdmissionReview has no request");
    }
    Outcome out = emptied(std::move(storage));
    out.uid = members->uid;
    if (out.uid.empty()) {
        return http_error(400, "BadRequest", "request.uid is missing");
    }
    const ReviewEnvelope envelope{api_version, out.uid};
    const json::object* kind = members->kind;
    const json::value* object = members->object;
    out.operation = members->operation;
    out.kind = text_at(kind, "kind");
    out.namespace_name = members->namespace_name;
    out.name = members->name;
    if (out.name.empty() && object != nullptr) {
        out.name = text_at(object_at(object->if_object(), "metadata"), "name");
    }
    if (out.name.empty() && built) {
        out.name = built->name;
    }
    out.user = text_at(members->user_info, "username");
    out.dry_run = members->dry_run;

    out.counts.operation = operation_label(out.operation);
    const rules::Operation operation = operation_of(out.operation);
    if (path == AdmissionPath::mutate) {
        static const json::value absent;
        const auto identity = text_at(kind, "group").empty() && out.kind == "Pod" &&
                                      operation == rules::Operation::create
                                  ? rules::identify_pod(object != nullptr ? *object : absent)
                                  : std::nullopt;
        out.verdict = "allowed";
        if (!identity) {
            // Other kinds and operations, and Pods of no ModelDeployment (which the
            // objectSelector should not have sent) are admitted as they are.
            out.body = allowed_review(envelope, {}, std::move(out.body));
            return out;
        }
        // The Pod outlives this request's arena while its ModelDeployment is looked up.
        return PendingPod{
            out.namespace_name, identity->deployment,     json::value(*object, json::storage_ptr()),
            *identity,          std::string(api_version), std::move(out)};
    }
    const bool judged = text_at(kind, "group") == judged_group && out.kind == judged_kind;
    if (!judged || operation == rules::Operation::remove ||
        operation == rules::Operation::connect) {
        if (!judged) {
            out.counts.unjudged_kind = unjudged_kind_label(text_at(kind, "group"), out.kind);
        }
        out.verdict = "allowed";
        out.body = allowed_review(envelope, {}, std::move(out.body));
        return out;
    }
    if (Clock::now() >= deadline) {
        out.verdict = "error";
        out.body = failed_review(envelope, 504, "Timeout",
                                 "the request's deadline passed before it was judged",
                                 std::move(out.body));
        return out;
    }
    try {
        static const json::value absent;
        const json::value* old_object = members->old_object;
        const rules::Evaluation evaluation =
            judge_({object != nullptr ? *object : absent,
                    old_object != nullptr && !old_object->is_null() ? old_object : nullptr,
                    instance_types, operation, built ? &*built : nullptr});
        for (const auto& finding : evaluation.findings) {
            out.counts.findings.push_back({finding.rule, finding.severity, finding.enforced});
        }
        out.verdict = evaluation.allowed() ? "allowed" : "denied";
        out.body = verdict_review(envelope, {out.name, judged_group, out.kind}, evaluation,
                                  std::move(out.body));
    } catch (const std::exception& e) {
        out.counts.panic = true;
        out.verdict = "error";
        out.body = failed_review(envelope, 500, "InternalError",
                                 std::string("internal error while judging: ") + e.what());
    }
    return out;
}

Outcome Admission::complete(PendingPod pending, const Lookup& lookup,
                            const rules::InstanceTypes* instance_types) const {
    Outcome out = std::move(pending.outcome);
    const ReviewEnvelope envelope{pending.api_version, out.uid};
    out.counts.lookup = lookup.status;
    if (lookup.status != Lookup::Status::found) {
        const std::string key = pending.namespace_name + "/" + pending.deployment;
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
        return out;
    }
    const json::array patch = rules::mutate_pod(pending.pod, pending.identity, *lookup.object,
                                                data_, instance_types, mutation_.containers);
    out.body =
        patch.empty() ? allowed_review(envelope) : patch_review(envelope, json::serialize(patch));
    return out;
}

}  // namespace mdadmit::admission
