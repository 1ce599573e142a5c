// manifests/monitoring against the server: every metric an alert or a dashboard panel reads
// is one the server exports, and the scrape reaches the port the metrics are served on.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "kustomize.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

const std::string stored_file =
    std::string(MDADMIT_SOURCE_DIR) + "/test/data/stored-modeldeployments.json";

// Every family the server's exposition declares (# TYPE lines), with a histogram's series.
std::set<std::string> exported_metrics(const std::string& exposition) {
    std::set<std::string> names;
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string hash, type, name, kind;
        if (words >> hash >> type >> name >> kind && hash == "#" && type == "TYPE") {
            names.insert(name);
            if (kind == "histogram") {
                for (const char* suffix : {"_bucket", "_sum", "_count"}) {
                    names.insert(name + suffix);
                }
            }
        }
    }
    return names;
}

// Every PromQL expression of the rendered monitoring manifests: alert rules and dashboard
// panels, each with where it comes from.
std::vector<std::pair<std::string, std::string>> expressions(
    const std::vector<json::value>& objects) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& object : objects) {
        const auto kind = object.at("kind").as_string();
        if (kind == "PrometheusRule") {
            for (const auto& group : object.at_pointer("/spec/groups").as_array()) {
                for (const auto& rule : group.at("rules").as_array()) {
                    out.emplace_back(std::string(rule.at("alert").as_string()),
                                     std::string(rule.at("expr").as_string()));
                }
            }
        } else if (kind == "ConfigMap") {
            const json::value dashboard =
                json::parse(object.at_pointer("/data/mdadmit.json").as_string());
            for (const auto& panel : dashboard.at("panels").as_array()) {
                for (const auto& target : panel.at("targets").as_array()) {
                    out.emplace_back("panel " + std::string(panel.at("title").as_string()),
                                     std::string(target.at("expr").as_string()));
                }
            }
        }
    }
    return out;
}

std::vector<json::value> rendered_monitoring() {
    auto documents = inputs::parse_documents(kustomize(MDADMIT_SOURCE_DIR, "manifests/monitoring"),
                                             "monitoring");
    if (!documents) {
        throw std::runtime_error(documents.error().message);
    }
    std::vector<json::value> objects;
    for (auto& document : documents.value()) {
        objects.push_back(std::move(document.value));
    }
    return objects;
}

TEST(Monitoring, EveryExpressionReadsMetricsTheServerExports) {
    // A server that has answered a review and audited stored objects, so every family shows.
    ServerFixture fixture([](server::Config& c) {
        c.cluster_files = stored_file;
        c.audit_interval = std::chrono::milliseconds(100);
    });
    ASSERT_TRUE(fixture.wait_for_metric("mdadmit_audit_objects 3\n"));
    ASSERT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate",
                        validate_review(denied_object)),
              200);
    const auto [status, scrape] = plain_get(fixture.health_port(), "/metrics");
    ASSERT_EQ(status, 200);
    const std::set<std::string> exported = exported_metrics(scrape);
    EXPECT_TRUE(exported.count("mdadmit_ready"));

    const auto all = expressions(rendered_monitoring());
    EXPECT_GE(all.size(), 20u);
    std::set<std::string> alerts;
    const std::regex metric(R"(\b(mdadmit_[a-z_]+)\b)");
    for (const auto& [where, expr] : all) {
        alerts.insert(where);
        int named = 0;
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric);
             it != std::sregex_iterator(); ++it, ++named) {
            EXPECT_TRUE(exported.count((*it)[1])) << where << ": " << (*it)[1] << " in " << expr;
        }
        EXPECT_TRUE(named > 0 || expr.find("up{job=\"mdadmit-metrics\"") != std::string::npos)
            << where << " reads no mdadmit metric: " << expr;
    }
    for (const char* alert : {"MdadmitDown", "MdadmitNotReady", "MdadmitCertificateExpiresSoon",
                              "MdadmitErrors", "MdadmitPanics", "MdadmitSlow", "MdadmitDenialSurge",
                              "MdadmitAuditViolations", "MdadmitCacheNotSynced"}) {
        EXPECT_TRUE(alerts.count(alert)) << alert;
    }
}

TEST(Monitoring, TheScrapeReachesTheMetricsPortOfTheWebhookPods) {
    const auto objects = rendered_monitoring();
    const json::value* service = nullptr;
    const json::value* monitor = nullptr;
    for (const auto& object : objects) {
        if (object.at("kind") == "Service") {
            service = &object;
        } else if (object.at("kind") == "ServiceMonitor") {
            monitor = &object;
        }
    }
    ASSERT_TRUE(service != nullptr && monitor != nullptr);
    // The ServiceMonitor selects the metrics Service, on a port it names; the Service sends
    // it to the container port the server serves /metrics on (manifests/base: health).
    for (const auto& [key, value] : monitor->at_pointer("/spec/selector/matchLabels").as_object()) {
        EXPECT_EQ(service->at_pointer("/metadata/labels").at(key), value) << key;
    }
    EXPECT_EQ(monitor->at_pointer("/spec/endpoints/0/port"),
              service->at_pointer("/spec/ports/0/name"));
    EXPECT_EQ(service->at_pointer("/spec/ports/0/targetPort"), "health");
    EXPECT_EQ(service->at_pointer("/metadata/namespace"), "mdadmit-system");
    // The down alert's job is the Service's name, which the operator uses as the job label.
    bool down_alert_names_the_job = false;
    for (const auto& [where, expr] : expressions(objects)) {
        if (where == "MdadmitDown") {
            down_alert_names_the_job =
                expr.find("job=\"" +
                          std::string(service->at_pointer("/metadata/name").as_string()) + "\"") !=
                std::string::npos;
        }
    }
    EXPECT_TRUE(down_alert_names_the_job);
}

}  // namespace
}  // namespace mdadmit::test
