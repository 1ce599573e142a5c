#include "routes.hpp"

#include <algorithm>
#include <cctype>

#include "review_response.hpp"

namespace mdadmit::server {

namespace {

HttpResponse error(int status, std::string_view reason, std::string_view message) {
    HttpResponse out;
    out.status = status;
    out.body = status_body(status, reason, message);
    return out;
}

HttpResponse text(int status, std::string body,
                  std::string content_type = "text/plain; charset=utf-8") {
    HttpResponse out;
    out.status = status;
    out.content_type = std::move(content_type);
    out.body = std::move(body);
    return out;
}

bool is_json(std::string_view content_type) {
    std::string media(content_type.substr(0, content_type.find(';')));
    media.erase(media.find_last_not_of(" \t") + 1);
    std::transform(media.begin(), media.end(), media.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return media == "application/json";
}

bool known_path(std::string_view path) {
    return path == "/validate" || path == "/mutate" || path == "/healthz" || path == "/readyz" ||
           path == "/metrics";
}

}  // namespace

Routes::Routes(const AdmissionHandler& admission, const Readiness& readiness, Metrics& metrics,
               RouteOptions options)
    : admission_(admission), readiness_(readiness), metrics_(metrics), options_(options) {}

Clock::time_point Routes::deadline(Clock::time_point received,
                                   std::optional<std::chrono::milliseconds> timeout) const {
    const auto budget =
        std::min(timeout.value_or(options_.default_timeout), options_.default_timeout * 3);
    // Answer a little before the apiserver gives up, so the answer is still read.
    const auto margin =
        std::min<std::chrono::milliseconds>(budget / 10, std::chrono::milliseconds(250));
    return received + budget - margin;
}

HttpResponse Routes::handle(const HttpRequest& request) const {
    const RequestTarget target = parse_target(request.target);
    metrics_.add_inflight(1);
    HttpResponse response = route(request, target);
    metrics_.add_inflight(-1);
    const AdmissionOutcome& decision = response.admission;
    metrics_.observe_request(
        {known_path(target.path) ? std::string_view(target.path) : std::string_view("other"),
         response.status, decision.operation, decision.verdict, decision.dry_run},
        Clock::now() - request.received);
    return response;
}

HttpResponse Routes::route(const HttpRequest& request, const RequestTarget& target) const {
    const std::string_view path = target.path;
    const bool admission = path == "/validate" || path == "/mutate";
    if (admission && request.over_tls) {
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
        HttpResponse out;
        out.is_admission = true;
        out.admission =
            admission_.handle(path == "/validate" ? AdmissionPath::validate : AdmissionPath::mutate,
                              request.body, deadline(request.received, target.timeout));
        out.status = out.admission.http_status;
        out.body = std::move(out.admission.body);
        return out;
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
        return text(200, metrics_.exposition(), "text/plain; version=0.0.4; charset=utf-8");
    }
    if (admission) {
        return error(404, "NotFound", "admission is served over TLS only");
    }
    return error(404, "NotFound", "no such path: " + std::string(path.substr(0, 128)));
}

}  // namespace mdadmit::server
