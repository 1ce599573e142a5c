#include "leader_lease.hpp"

#include <boost/json.hpp>
#include <cstdio>
#include <ctime>

#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::server {

namespace json = boost::json;

std::string micro_time_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                            now.time_since_epoch() - std::chrono::seconds(seconds))
                            .count();
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[96];  // room for any int the compiler imagines in each field
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<long long>(micros));
    return text;
}

LeaderLease::LeaderLease(std::string namespace_name, std::string name, std::string identity,
                         std::chrono::seconds duration)
    : namespace_name_(std::move(namespace_name)),
      name_(std::move(name)),
      identity_(std::move(identity)),
      duration_(duration) {}

std::string LeaderLease::path() const {
    return "/apis/coordination.k8s.io/v1/namespaces/" + namespace_name_ + "/leases/" + name_;
}

bool LeaderLease::held() const {
    return held_ && std::chrono::steady_clock::now() - held_since_ < duration_;
}

boost::asio::awaitable<bool> LeaderLease::release(KubeConnection& connection,
                                                  std::chrono::steady_clock::time_point deadline) {
    held_ = false;
    const KubeResponse current = co_await connection.get(path(), deadline);
    boost::system::error_code ec;
    json::value lease = current.status == 200 ? json::parse(current.body, ec) : json::value();
    if (current.status != 200 || ec ||
        rules::string_at(lease, "/spec/holderIdentity") != identity_) {
        co_return false;
    }
    json::object& spec = lease.as_object()["spec"].as_object();
    spec["holderIdentity"] = "";
    spec["renewTime"] = micro_time_now();
    spec["leaseDurationSeconds"] = 1;
    const KubeResponse written =
        co_await connection.request(KubeMethod::put, path(), json::serialize(lease), deadline);
    co_return written.status == 200;
}

boost::asio::awaitable<bool> LeaderLease::try_hold(KubeConnection& connection,
                                                   std::chrono::steady_clock::time_point deadline) {
    held_ = co_await hold(connection, deadline);
    co_return held_;
}

boost::asio::awaitable<bool> LeaderLease::hold(KubeConnection& connection,
                                               std::chrono::steady_clock::time_point deadline) {
    const auto started = std::chrono::steady_clock::now();
    const std::string now = micro_time_now();
    const KubeResponse current = co_await connection.get(path(), deadline);
    if (current.status == 404) {
        const json::object lease{{"apiVersion", "coordination.k8s.io/v1"},
                                 {"kind", "Lease"},
                                 {"metadata", {{"name", name_}, {"namespace", namespace_name_}}},
                                 {"spec",
                                  {{"holderIdentity", identity_},
                                   {"leaseDurationSeconds", duration_.count()},
                                   {"acquireTime", now},
                                   {"renewTime", now},
                                   {"leaseTransitions", 0}}}};
        const KubeResponse created = co_await connection.request(
            KubeMethod::post,
            "/apis/coordination.k8s.io/v1/namespaces/" + namespace_name_ + "/leases",
            json::serialize(lease), deadline);
        held_since_ = started;
        co_return created.status == 201 || created.status == 200;
    }
    if (current.status != 200) {
        co_return false;
    }
    boost::system::error_code ec;
    json::value lease = json::parse(current.body, ec);
    if (ec || !lease.is_object() || !lease.as_object()["spec"].is_object()) {
        co_return false;
    }
    json::object& spec = lease.as_object()["spec"].as_object();
    const json::value* holder_value = spec.if_contains("holderIdentity");
    const std::string holder = holder_value != nullptr && holder_value->is_string()
                                   ? std::string(holder_value->as_string())
                                   : std::string();
    const json::value* renew_value = spec.if_contains("renewTime");
    const std::string record =
        holder + "@" + (renew_value != nullptr ? json::serialize(*renew_value) : "");
    const auto seen = std::chrono::steady_clock::now();
    if (record != observed_record_) {
        observed_record_ = record;
        observed_at_ = seen;
    }
    const bool ours = holder == identity_;
    // Another holder's lease runs for the duration it wrote, as client-go reads it.
    const json::value* written_duration = spec.if_contains("leaseDurationSeconds");
    const auto holder_duration = written_duration != nullptr && written_duration->is_int64()
                                     ? std::chrono::seconds(written_duration->as_int64())
                                     : duration_;
    if (!ours && !holder.empty() && seen - observed_at_ < holder_duration) {
        co_return false;
    }
    if (!ours) {
        const json::value* transitions = spec.if_contains("leaseTransitions");
        spec["leaseTransitions"] =
            (transitions != nullptr && transitions->is_int64() ? transitions->as_int64() : 0) + 1;
        spec["acquireTime"] = now;
        spec["holderIdentity"] = identity_;
    }
    spec["renewTime"] = now;
    spec["leaseDurationSeconds"] = duration_.count();
    // The body keeps metadata.resourceVersion as read: a concurrent write makes this one 409.
    const KubeResponse written =
        co_await connection.request(KubeMethod::put, path(), json::serialize(lease), deadline);
    if (written.status == 200) {
        observed_record_.clear();
        held_since_ = started;
        co_return true;
    }
    co_return false;
}

}  // namespace mdadmit::server
