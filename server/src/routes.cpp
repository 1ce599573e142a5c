#include "routes.hpp"

#include <algorithm>
#include <cctype>

#include "mdadmit/admission/review.hpp"

namespace mdadmit::server {

namespace {

using admission::status_body;

HttpResponse error(int status, std::string_view reason, std::string_view message) {
    HttpResponse out;
    out.status = status;
    out.body = status_body(status, reason, message);
    return out;
}

HttpResponse text(int status, std::string body,
                  std::string_view content_type = "text/plain; charset=utf-8") {
    HttpResponse out;
    out.status = status;
    out.content_type = content_type;
    out.body = std::move(body);
    return out;
}

bool is_json(std::string_view content_type) {
    std::string_view media = content_type.substr(0, content_type.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) {
        media.remove_suffix(1);
    }
    constexpr std::string_view json = "application/json";
    return std::equal(media.begin(), media.end(), json.begin(), json.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
    });
}

bool known_path(std::string_view path) {
    return path == "/validate" || path == "/mutate" || path == "/healthz" || path == "/readyz" ||
           path == "/metrics";
}

}  // namespace

Routes::Routes(const admission::Admission& admission, const InstanceTypeStore& instance_types,
               const Readiness& readiness, Metrics& metrics, RouteOptions options)
    : admission_(admission),
      instance_types_(instance_types),
      readiness_(readiness),
      metrics_(metrics),
      options_(options) {}

Clock::time_point Routes::deadline(Clock::time_point received,
                                   std::optional<std::chrono::milliseconds> timeout) const {
    const auto budget =
        std::min(timeout.value_or(options_.default_timeout), options_.default_timeout * 3);
    // Answer a little before the apiserver gives up, so the answer is still read.
    const auto margin =
        std::min<std::chrono::milliseconds>(budget / 10, std::chrono::milliseconds(250));
    return received + budget - margin;
}

RouteResult Routes::handle(const HttpRequest& request, HttpResponse storage) const {
    metrics_.add_inflight(1);
    RouteResult result = route(request, std::move(storage));
    if (const auto* response = std::get_if<HttpResponse>(&result)) {
        finish(request.target.path, *response, request.received);
    }
    return result;
}

HttpResponse Routes::complete(PendingResponse pending, const admission::Lookup& lookup) const {
    const auto types = instance_types_.current();
    HttpResponse response =
        admission_response(admission_.complete(std::move(pending.pod), lookup, types.get()));
    finish("/mutate", response, pending.received);
    return response;
}

// Counts what the answer says; the request has left the server.
void Routes::finish(std::string_view path, const HttpResponse& response,
                    Clock::time_point received) const {
    metrics_.add_inflight(-1);
    const admission::Outcome& decision = response.admission;
    for (const auto& finding : decision.counts.findings) {
        metrics_.count_finding(finding.rule, rules::to_string(finding.severity), finding.enforced);
    }
    if (!decision.counts.unjudged_kind.empty()) {
        metrics_.count_unjudged_kind(decision.counts.unjudged_kind);
    }
    if (decision.counts.lookup) {
        metrics_.count_lookup(admission::to_string(*decision.counts.lookup));
    }
    if (decision.counts.panic) {
        metrics_.count_panic();
    }
    metrics_.observe_request({known_path(path) ? path : std::string_view("other"), response.status,
                              decision.counts.operation, decision.verdict, decision.dry_run},
                             Clock::now() - received);
}

HttpResponse Routes::admission_response(admission::Outcome outcome) const {
    HttpResponse out;
    out.is_admission = true;
    out.status = outcome.http_status;
    out.body = std::move(outcome.body);
    out.admission = std::move(outcome);
    return out;
}

RouteResult Routes::route(const HttpRequest& request, HttpResponse storage) const {
    const std::string_view path = request.target.path;
    const bool reviews = path == "/validate" || path == "/mutate";
    if (reviews && request.over_tls) {
        if (request.method != "POST") {
            HttpResponse out = error(405, "MethodNotAllowed", "admission reviews are POSTed");
            out.allow = "POST";
            return out;
        }
        if (!is_json(request.content_type)) {
            return error(415, "UnsupportedMediaType", "Content-Type must be application/json");
        }
        if (request.body_over_limit) {
            return error(413, "RequestEntityTooLarge",
                         "request body exceeds " + std::to_string(options_.body_limit) + " bytes");
        }
        const auto types = instance_types_.current();
        const Clock::time_point deadline = this->deadline(request.received, request.target.timeout);
        // The last answer's text and decision are this one's memory.
        admission::Outcome memory = std::move(storage.admission);
        memory.body = std::move(storage.body);
        auto step = admission_.admit(path == "/validate" ? admission::AdmissionPath::validate
                                                         : admission::AdmissionPath::mutate,
                                     request.body, types.get(), deadline, std::move(memory));
        if (auto* pending = std::get_if<admission::PendingPod>(&step)) {
            return PendingResponse{std::move(*pending), deadline, request.received};
        }
        return admission_response(std::move(std::get<admission::Outcome>(step)));
    }
    if (path == "/healthz" || path == "/readyz" || path == "/metrics") {
        if (request.method != "GET" && request.method != "HEAD") {
            HttpResponse out = error(405, "MethodNotAllowed", "use GET");
            out.allow = "GET, HEAD";
            return out;
        }
        if (path == "/healthz") {
            return text(200, "ok\n");
        }
        if (path == "/readyz") {
            return text(readiness_.ready() ? 200 : 503, readiness_.report());
        }
        // Readiness as a gauge too, so an alert can tell "not ready" from "down".
        return text(200,
                    metrics_.exposition() +
                        "# HELP mdadmit_ready 1 when /readyz answers 200, else 0.\n"
                        "# TYPE mdadmit_ready gauge\nmdadmit_ready " +
                        (readiness_.ready() ? "1" : "0") + "\n",
                    "text/plain; version=0.0.4; charset=utf-8");
    }
    if (reviews) {
        return error(404, "NotFound", "admission is served over TLS only");
    }
    return error(404, "NotFound", "no such path: " + std::string(path.substr(0, 128)));
}

}  // namespace mdadmit::server
