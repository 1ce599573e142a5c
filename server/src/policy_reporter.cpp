#include "policy_reporter.hpp"

#include <boost/json.hpp>

#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

namespace json = boost::json;

namespace {

constexpr auto request_timeout = std::chrono::seconds(10);
constexpr std::string_view report_name = "mdadmit";
constexpr std::string_view managed_by = "app.kubernetes.io/managed-by=mdadmit";

// Each request its own deadline, so that many namespaces do not share one.
std::chrono::steady_clock::time_point deadline() {
    return std::chrono::steady_clock::now() + request_timeout;
}

// namespace_name comes from a stored object's metadata: a DNS label, safe in a path.
std::string reports_path(const std::string& namespace_name) {
    return "/apis/wgpolicyk8s.io/v1alpha2/namespaces/" + namespace_name + "/policyreports";
}

}  // namespace

PolicyReporter::PolicyReporter(boost::asio::any_io_executor executor,
                               std::shared_ptr<const KubeApi> api, const rules::RuleData& data,
                               LeaderLease lease, const Log& log)
    : connection_(std::move(executor), std::move(api)),
      data_(data),
      lease_(std::move(lease)),
      log_(log) {}

boost::asio::awaitable<void> PolicyReporter::publish(
    const std::vector<admission::AuditedObject>& objects) {
    const bool leading = co_await lease_.try_hold(connection_, deadline());
    if (leading != leading_) {
        log_.write(LogLevel::info,
                   leading ? "writing PolicyReports (holding the lease)"
                           : "not writing PolicyReports (another replica holds the lease)",
                   {{"identity", lease_.identity()}});
        leading_ = leading;
        // Whoever leads writes; on taking over, the reports already in the cluster (written
        // by any replica, before any restart) are compared afresh, and emptied where their
        // namespace has no ModelDeployment left.
        written_.clear();
        if (leading && !co_await adopt_existing_reports()) {
            leading_ = false;  // tried again at the next audit
            co_return;
        }
    }
    if (!leading) {
        co_return;
    }
    std::map<std::string, std::vector<const admission::AuditedObject*>> by_namespace;
    for (const auto& object : objects) {
        by_namespace[object.namespace_name].push_back(&object);
    }
    for (const auto& [namespace_name, content] : written_) {
        by_namespace.try_emplace(namespace_name);
    }
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    for (const auto& [namespace_name, members] : by_namespace) {
        if (!lease_.held()) {
            break;  // the lease lapsed while writing: another replica may lead by now
        }
        const std::string content =
            json::serialize(admission::policy_report(namespace_name, members, data_, 0));
        if (const auto it = written_.find(namespace_name);
            it != written_.end() && it->second == content) {
            continue;
        }
        const json::object report = admission::policy_report(namespace_name, members, data_, now);
        const Written outcome = co_await write(namespace_name, report, !members.empty());
        if (outcome == Written::failed) {
            continue;  // tried again after the next audit
        }
        if (members.empty()) {
            written_.erase(namespace_name);  // emptied, or gone with its namespace
        } else {
            written_[namespace_name] = content;
        }
    }
}

boost::asio::awaitable<void> PolicyReporter::release() {
    if (!leading_) {
        co_return;
    }
    leading_ = false;
    const bool released = co_await lease_.release(connection_, deadline());
    log_.write(released ? LogLevel::info : LogLevel::warn,
               released ? "released the PolicyReport lease" : "could not release the lease",
               {{"identity", lease_.identity()}});
}

boost::asio::awaitable<bool> PolicyReporter::adopt_existing_reports() {
    const KubeResponse listed = co_await connection_.get(
        "/apis/wgpolicyk8s.io/v1alpha2/policyreports?labelSelector=" + std::string(managed_by),
        deadline());
    boost::system::error_code ec;
    const json::value list = listed.status == 200 ? json::parse(listed.body, ec) : json::value();
    if (listed.status != 200 || ec || !list.is_object() || !list.as_object().contains("items") ||
        !list.at("items").is_array()) {
        log_.write(LogLevel::warn, "PolicyReports not listed",
                   {{"status", std::to_string(listed.status)}, {"error", listed.error}});
        co_return false;
    }
    for (const auto& item : list.at("items").as_array()) {
        if (rules::string_at(item, "/metadata/name") == report_name &&
            rules::string_at(item, "/metadata/labels/app.kubernetes.io~1managed-by") == "mdadmit") {
            written_[rules::string_at(item, "/metadata/namespace")] = std::string();
        }
    }
    co_return true;
}

boost::asio::awaitable<PolicyReporter::Written> PolicyReporter::write(
    const std::string& namespace_name, const json::object& report, bool has_objects) {
    const std::string object_path = reports_path(namespace_name) + "/" + std::string(report_name);
    const KubeResponse existing = co_await connection_.get(object_path, deadline());
    KubeResponse written;
    if (existing.status == 404 && !has_objects) {
        co_return Written::unneeded;  // no report to empty (or no namespace any more)
    }
    if (existing.status == 200) {
        boost::system::error_code ec;
        const json::value current = json::parse(existing.body, ec);
        const std::string version =
            ec ? std::string() : rules::string_at(current, "/metadata/resourceVersion");
        if (version.empty()) {
            log_.write(LogLevel::warn, "PolicyReport unreadable", {{"namespace", namespace_name}});
            co_return Written::failed;
        }
        // Replaced as read: a write in between makes this one 409, retried next audit.
        json::object replacement = report;
        replacement["metadata"].as_object()["resourceVersion"] = version;
        written = co_await connection_.request(KubeMethod::put, object_path,
                                               json::serialize(replacement), deadline());
    } else if (existing.status == 404) {
        written = co_await connection_.request(KubeMethod::post, reports_path(namespace_name),
                                               json::serialize(report), deadline());
    } else {
        written = existing;
    }
    if (written.status == 200 || written.status == 201) {
        co_return Written::written;
    }
    log_.write(LogLevel::warn, "PolicyReport not written",
               {{"namespace", namespace_name},
                {"status", std::to_string(written.status)},
                {"error", written.error.empty() ? written.body.substr(0, 200) : written.error}});
    co_return Written::failed;
}

}  // namespace mdadmit::server
