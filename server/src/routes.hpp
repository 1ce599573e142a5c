#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <variant>

#include "instance_type_store.hpp"
#include "mdadmit/admission/admission.hpp"
#include "metrics.hpp"
#include "readiness.hpp"
#include "request_target.hpp"

namespace mdadmit::server {

using admission::Clock;

// A request as the session read it; the body may be cut short when it exceeded the limit.
struct HttpRequest {
    std::string_view method;
    RequestTarget target;  // parsed once, when the header arrived
    std::string_view content_type;
    std::string_view body;
    bool body_over_limit = false;
    bool over_tls = true;
    Clock::time_point received;
};

struct HttpResponse {
    int status = 200;
    std::string_view content_type = "application/json";  // one of the server's own
    std::string body;
    std::string_view allow;  // the Allow header of a 405
    // The decision, for the log line; empty for requests that are not admission reviews.
    admission::Outcome admission;
    bool is_admission = false;
};

// A Pod on /mutate whose ModelDeployment must be looked up before it is answered.
struct PendingResponse {
    admission::PendingPod pod;
    Clock::time_point deadline;
    Clock::time_point received;
};

using RouteResult = std::variant<HttpResponse, PendingResponse>;

struct RouteOptions {
    std::size_t body_limit = 7 * 1024 * 1024;
    // Upper bound on judging when the apiserver sends no ?timeout= (its own default is 10 s).
    std::chrono::milliseconds default_timeout{10'000};
};

// Maps a request to its answer: admission on POST /validate and /mutate (TLS only),
// GET /healthz, /readyz and /metrics on either port. No I/O; counts every answer in the
// metrics. A Pod on /mutate comes back pending: the caller looks its ModelDeployment up,
// without holding its thread, and completes it.
class Routes {
  public:
    Routes(const admission::Admission& admission, const InstanceTypeStore& instance_types,
           const Readiness& readiness, Metrics& metrics, RouteOptions options);

    // The answer is written into `storage`'s memory where it can be (its contents are
    // discarded): a connection hands back each response once it is written.
    RouteResult handle(const HttpRequest& request, HttpResponse storage = {}) const;
    HttpResponse complete(PendingResponse pending, const admission::Lookup& lookup) const;
    const RouteOptions& options() const { return options_; }

    // When to stop working on a request received at `received` with the given ?timeout=.
    Clock::time_point deadline(Clock::time_point received,
                               std::optional<std::chrono::milliseconds> timeout) const;

  private:
    RouteResult route(const HttpRequest& request, HttpResponse storage) const;
    HttpResponse admission_response(admission::Outcome outcome) const;
    void finish(std::string_view path, const HttpResponse& response,
                Clock::time_point received) const;

    const admission::Admission& admission_;
    const InstanceTypeStore& instance_types_;
    const Readiness& readiness_;
    Metrics& metrics_;
    RouteOptions options_;
};

}  // namespace mdadmit::server
