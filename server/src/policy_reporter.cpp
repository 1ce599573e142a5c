#include "policy_reporter.hpp"

#include <boost/json.hpp>

#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

namespace json = boost::json;

namespace {

constexpr auto request_timeout = std::chrono::seconds(10);

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
    const auto deadline = std::chrono::steady_clock::now() + request_timeout;
    const bool leading = co_await lease_.try_hold(connection_, deadline);
    if (leading != leading_) {
        log_.write(LogLevel::info,
                   leading ? "writing PolicyReports (holding the lease)"
                           : "not writing PolicyReports (another replica holds the lease)",
                   {{"identity", lease_.identity()}});
        leading_ = leading;
    }
    if (!leading) {
        // Whoever leads now writes; on taking over again, every report is written afresh.
        written_.clear();
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
        const std::string content =
            json::serialize(admission::policy_report(namespace_name, members, data_, 0));
        if (const auto it = written_.find(namespace_name);
            it != written_.end() && it->second == content) {
            continue;
        }
        const json::object report = admission::policy_report(namespace_name, members, data_, now);
        if (!co_await write(namespace_name, report, deadline)) {
            continue;  // tried again after the next audit
        }
        if (members.empty()) {
            written_.erase(namespace_name);  // emptied; nothing left there to report on
        } else {
            written_[namespace_name] = content;
        }
    }
}

boost::asio::awaitable<bool> PolicyReporter::write(const std::string& namespace_name,
                                                   const json::object& report,
                                                   std::chrono::steady_clock::time_point deadline) {
    const std::string object_path = reports_path(namespace_name) + "/mdadmit";
    const KubeResponse existing = co_await connection_.get(object_path, deadline);
    KubeResponse written;
    if (existing.status == 200) {
        boost::system::error_code ec;
        const json::value current = json::parse(existing.body, ec);
        // Replaced as read: a write in between makes this one 409, retried next audit.
        json::object replacement = report;
        replacement["metadata"].as_object()["resourceVersion"] =
            ec ? std::string() : rules::string_at(current, "/metadata/resourceVersion");
        written = co_await connection_.request(KubeMethod::put, object_path,
                                               json::serialize(replacement), deadline);
    } else if (existing.status == 404) {
        written = co_await connection_.request(KubeMethod::post, reports_path(namespace_name),
                                               json::serialize(report), deadline);
    } else {
        written = existing;
    }
    const bool ok = written.status == 200 || written.status == 201;
    if (!ok) {
        log_.write(
            LogLevel::warn, "PolicyReport not written",
            {{"namespace", namespace_name},
             {"status", std::to_string(written.status)},
             {"error", written.error.empty() ? written.body.substr(0, 200) : written.error}});
    }
    co_return ok;
}

}  // namespace mdadmit::server
