// HTTP routing, status codes and metrics, without sockets.
#include "routes.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "http_response.hpp"
#include "mdadmit/admission/review.hpp"
#include "request_target.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
using server::Clock;
using server::HttpRequest;

class RoutesTest : public testing::Test {
  protected:
    server::HttpResponse call(std::string_view method, std::string_view target,
                              std::string_view body = "{}",
                              std::string_view content_type = "application/json",
                              bool over_tls = true, bool over_limit = false) {
        auto result = routes.handle(HttpRequest{method, server::parse_target(target), content_type,
                                                body, over_limit, over_tls, Clock::now()});
        EXPECT_TRUE(std::holds_alternative<server::HttpResponse>(result));
        return std::get<server::HttpResponse>(std::move(result));
    }

    rules::Engine engine = rules::Engine::with_embedded_data();
    server::Metrics metrics;
    server::Readiness readiness;
    server::InstanceTypeStore instance_types;
    admission::Admission admission{engine};
    server::Routes routes{
        admission, instance_types, readiness, metrics, {1024, std::chrono::milliseconds(10'000)}};
};

const char* minimal_review =
    R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"DELETE"}})";

TEST_F(RoutesTest, AdmissionPathsRouteWithQueryAndTrailingSlash) {
    for (const char* target : {"/validate", "/validate/", "/validate?timeout=10s",
                               "/validate/?timeout=5s", "/mutate", "/mutate?timeout=2s"}) {
        const auto response = call("POST", target, minimal_review);
        EXPECT_EQ(response.status, 200) << target;
        EXPECT_TRUE(response.is_admission) << target;
    }
}

TEST_F(RoutesTest, ErrorPaths) {
    const auto not_found = call("POST", "/nope", minimal_review);
    EXPECT_EQ(not_found.status, 404);
    const auto wrong_method = call("GET", "/validate");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.allow, "POST");
    EXPECT_EQ(call("POST", "/validate", minimal_review, "text/plain").status, 415);
    EXPECT_EQ(call("POST", "/validate", minimal_review, "").status, 415);
    EXPECT_EQ(call("POST", "/validate", minimal_review, "Application/JSON; charset=utf-8").status,
              200);
    const auto too_large = call("POST", "/validate", "", "application/json", true, true);
    EXPECT_EQ(too_large.status, 413);
    EXPECT_NE(too_large.body.find("request body exceeds 1024 bytes"), std::string::npos);
    EXPECT_EQ(call("POST", "/validate", "nonsense").status, 400);
    EXPECT_EQ(call("POST", "/healthz").status, 405);
}

TEST_F(RoutesTest, AdmissionIsNotServedOnThePlainPort) {
    const auto response = call("POST", "/validate", minimal_review, "application/json", false);
    EXPECT_EQ(response.status, 404);
    EXPECT_NE(response.body.find("admission is served over TLS only"), std::string::npos);
    EXPECT_EQ(call("GET", "/healthz", "", "", false).status, 200);
}

TEST_F(RoutesTest, ReadinessReportsWhatIsMissing) {
    EXPECT_EQ(call("GET", "/readyz").status, 503);
    readiness.rules_loaded = true;
    readiness.certificate_loaded = true;
    readiness.tls_accepting = true;
    const auto ready = call("GET", "/readyz");
    EXPECT_EQ(ready.status, 200);
    EXPECT_EQ(ready.body, "ok\n");
    readiness.shutting_down = true;
    const auto draining = call("GET", "/readyz");
    EXPECT_EQ(draining.status, 503);
    EXPECT_EQ(draining.body, "shutting down\n");
    EXPECT_EQ(call("GET", "/healthz").body, "ok\n");
}

TEST_F(RoutesTest, MetricsCountRequestsByPathCodeOperationVerdictAndDryRun) {
    call("POST", "/validate?timeout=10s", minimal_review);
    call("POST", "/nope");
    const auto exposition = call("GET", "/metrics");
    EXPECT_EQ(exposition.content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_NE(
        exposition.body.find(
            R"(mdadmit_requests_total{path="/validate",code="200",operation="DELETE",verdict="allowed",dry_run="false"} 1)"),
        std::string::npos)
        << exposition.body;
    EXPECT_NE(
        exposition.body.find(
            R"(mdadmit_requests_total{path="other",code="404",operation="",verdict="",dry_run="false"} 1)"),
        std::string::npos);
    EXPECT_NE(exposition.body.find(
                  R"(mdadmit_request_duration_seconds_bucket{path="/validate",le="30"} 1)"),
              std::string::npos);
    EXPECT_NE(exposition.body.find("mdadmit_inflight_requests 1\n"), std::string::npos);
}

TEST_F(RoutesTest, TheDeadlineIsTheApiserversTimeoutLessAMargin) {
    const auto now = Clock::now();
    EXPECT_EQ(routes.deadline(now, std::chrono::milliseconds(10'000)),
              now + std::chrono::milliseconds(9'750));
    EXPECT_EQ(routes.deadline(now, std::chrono::milliseconds(1'000)),
              now + std::chrono::milliseconds(900));
    EXPECT_EQ(routes.deadline(now, std::nullopt), now + std::chrono::milliseconds(9'750));
}

TEST(ResponseWire, StatusLineHeadersAndBodyInOneBufferAsHttpSaysForEachVersionAndMethod) {
    std::string wire = "left from the previous answer";
    server::write_response({200, "application/json", {}, 11, true, false}, R"({"a":1})", wire);
    EXPECT_EQ(wire,
              "HTTP/1.1 200 OK\r\nServer: mdadmit\r\nContent-Type: application/json\r\n"
              "Content-Length: 7\r\n\r\n{\"a\":1}");

    server::write_response({405, "application/json", "GET, HEAD", 11, false, false}, "{}", wire);
    EXPECT_EQ(wire,
              "HTTP/1.1 405 Method Not Allowed\r\nServer: mdadmit\r\nContent-Type: "
              "application/json\r\nAllow: GET, HEAD\r\nContent-Length: 2\r\nConnection: "
              "close\r\n\r\n{}");

    // HTTP/1.0 closes unless told to keep the connection; HEAD gets the length, not the body.
    server::write_response({200, "text/plain", {}, 10, true, true}, "ok\n", wire);
    EXPECT_EQ(wire,
              "HTTP/1.0 200 OK\r\nServer: mdadmit\r\nContent-Type: text/plain\r\n"
              "Content-Length: 3\r\nConnection: keep-alive\r\n\r\n");
    server::write_response({503, "text/plain", {}, 10, false, false}, "", wire);
    EXPECT_EQ(wire,
              "HTTP/1.0 503 Service Unavailable\r\nServer: mdadmit\r\nContent-Type: "
              "text/plain\r\nContent-Length: 0\r\n\r\n");
}

TEST(RequestTarget, PathsAndGoDurations) {
    EXPECT_EQ(server::parse_target("/validate/?timeout=10s").path, "/validate");
    EXPECT_EQ(server::parse_target("/validate?timeout=10s").timeout,
              std::chrono::milliseconds(10'000));
    EXPECT_EQ(server::parse_target("/a?x=1&timeout=1m30s").timeout,
              std::chrono::milliseconds(90'000));
    EXPECT_EQ(server::parse_target("/").path, "/");
    EXPECT_EQ(server::parse_go_duration("500ms"), std::chrono::milliseconds(500));
    EXPECT_EQ(server::parse_go_duration("2.5s"), std::chrono::milliseconds(2'500));
    EXPECT_EQ(server::parse_go_duration("10"), std::nullopt);
    EXPECT_EQ(server::parse_go_duration("10x"), std::nullopt);
    EXPECT_EQ(server::parse_go_duration(""), std::nullopt);
}

TEST(Warnings, ControlCharactersDuplicatesAndLength) {
    rules::Evaluation evaluation;
    evaluation.findings.push_back(
        {"r", rules::Severity::warn, "spec", "line\nbreak\tand tab", "", true});
    evaluation.findings.push_back(
        {"r", rules::Severity::warn, "spec", "line\nbreak\tand tab", "", true});
    evaluation.findings.push_back({"long", rules::Severity::warn, "", std::string(400, 'x'), ""});
    // Different findings whose lines are cut to the same text are one warning.
    evaluation.findings.push_back({"long", rules::Severity::warn, "", std::string(401, 'x'), ""});
    evaluation.findings.push_back({"denied", rules::Severity::deny, "spec", "not a warning", ""});
    // A cut never splits a UTF-8 sequence: "é" is two bytes, the first at byte 252.
    evaluation.findings.push_back(
        {"r", rules::Severity::warn, "s", std::string(233, 'y') + "\xC3\xA9zzz", "", false});
    const auto lines = admission::warning_lines(evaluation);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "r: spec: line break and tab");
    EXPECT_EQ(lines[1].size(), 256u);
    EXPECT_EQ(lines[1].substr(0, 20), "long: (object): xxxx");
    EXPECT_EQ(lines[1].substr(253), "...");
    EXPECT_EQ(lines[2], "r (would deny): s: " + std::string(233, 'y') + "...");

    // Many warnings, few of them distinct: each distinct line once, in the order first seen.
    rules::Evaluation many;
    for (int i = 0; i < 5000; ++i) {
        many.findings.push_back({"r", rules::Severity::warn,
                                 "spec.x[" + std::to_string(i % 7) + "]", "message", "", true});
    }
    const auto distinct = admission::warning_lines(many);
    ASSERT_EQ(distinct.size(), 7u);
    EXPECT_EQ(distinct.front(), "r: spec.x[0]: message");
    EXPECT_EQ(distinct.back(), "r: spec.x[6]: message");
}

// Every warning the rules give, as kubectl prints it, stays under 120 characters for roles
// and images of ordinary length.
TEST(Warnings, TheRulesWarningsFitALine) {
    const rules::Engine engine = rules::Engine::with_embedded_data();
    const auto object = [](std::string_view spec) {
        return json::parse(R"({"metadata": {"name": "chat", "namespace": "team-a"}, "spec": )" +
                           std::string(spec) + "}");
    };
    const json::value warned[] = {
        object(R"({"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "1"},
            "router": {"name": "llm-d-router"},
            "roles": [{"name": "ranks", "extraArgs": ["--data-parallel-rank", "0"]}]})"),
        object(R"({"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "1"},
            "router": {"name": "sglang-gateway", "image": "registry.example.com/gpustack/llm-router:v0.3.1"},
            "roles": [{"name": "dp", "extraArgs": ["--enable-dp-attention", "--dp-size", "2"]}]})"),
        object(R"({"model": {"name": "m"}, "engine": {"name": "vLLM", "version": "1"},
            "router": {"name": "llm-d-router"},
            "roles": [{"name": "encoder", "kind": "Encode", "instanceType": "gpu-pool-a"},
                      {"name": "prefill", "kind": "Prefill"}, {"name": "decode", "kind": "Decode"}]})"),
    };
    std::size_t judged = 0;
    for (const auto& value : warned) {
        for (const auto& line : admission::warning_lines(engine.evaluate({value}))) {
            EXPECT_LT(line.size(), 120u) << line;
            ++judged;
        }
    }
    EXPECT_EQ(judged, 3u);
}

}  // namespace
}  // namespace mdadmit::test
