#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "mdadmit/admission/audit.hpp"
#include "per_thread_family.hpp"

namespace mdadmit::server {

// The labels of one answered request.
struct RequestLabels {
    std::string_view path;       // "/validate", "/mutate", "/healthz", ... or "other"
    int code = 200;              // HTTP status
    std::string_view operation;  // CREATE, UPDATE, DELETE, CONNECT, or "" when not a review
    std::string_view verdict;    // allowed, denied, error, or ""
    bool dry_run = false;
};

// Prometheus metrics of the process, all prefixed mdadmit_. Thread-safe without a lock on the
// request path: counters with a fixed shape are atomics, labelled families are counted per
// thread and summed at scrape.
class Metrics {
  public:
    // Latency buckets in seconds, up to the apiserver's 30 s webhook ceiling.
    static constexpr std::array<double, 17> latency_buckets{
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
        0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0, 30.0};

    void observe_request(const RequestLabels& labels, std::chrono::nanoseconds latency);
    // enforced=false: a deny finding that staged enforcement reported as a warning.
    void count_finding(std::string_view rule, std::string_view severity, bool enforced);
    void count_unjudged_kind(std::string_view kind);
    // A ModelDeployment read for the mutating path: found or missing.
    void count_lookup(std::string_view result);
    // The cluster cache of one kind: a list or a watch event applied, and whether it holds the
    // cluster's state yet.
    void count_cache_update(std::string_view kind, std::string_view update);
    void set_cache_synced(std::string_view kind, bool synced);
    // What the last periodic audit of the stored ModelDeployments found. A label set seen
    // once stays, at 0 when its violations are fixed, so alerts on it resolve.
    void set_audit(const admission::AuditTally& tally, double finished_unix_seconds,
                   double seconds);
    void count_panic() { panics_.fetch_add(1, std::memory_order_relaxed); }
    void count_tls_handshake_failure() {
        tls_handshake_failures_.fetch_add(1, std::memory_order_relaxed);
    }
    void count_connection_rejected() {
        connections_rejected_.fetch_add(1, std::memory_order_relaxed);
    }
    void count_certificate_reload(bool ok);
    void set_certificate_expiry(std::int64_t unix_seconds) {
        certificate_expiry_.store(unix_seconds);
    }
    void add_inflight(int delta) { inflight_.fetch_add(delta, std::memory_order_relaxed); }
    void add_connections(int delta) { connections_.fetch_add(delta, std::memory_order_relaxed); }

    // The Prometheus text exposition format, version 0.0.4.
    std::string exposition() const;

  private:
    void write_latency(std::string& out) const;

    struct CounterCell {
        std::atomic<std::uint64_t> count{0};
        bool empty() const { return count.load(std::memory_order_relaxed) == 0; }
    };
    // Observations per bucket, not cumulative, so one observation is one write and the
    // scrape's cumulative counts can never decrease from one bucket to the next. The last
    // bucket holds observations above the largest bound.
    struct HistogramCell {
        std::array<std::atomic<std::uint64_t>, latency_buckets.size() + 1> buckets{};
        std::atomic<double> sum{0};
        bool empty() const;
    };
    // Label sets a thread keeps apart before they share the overflow labels. The values come
    // from closed sets (paths, codes, rules, kinds), so real traffic stays far below this.
    static constexpr std::size_t label_sets_per_thread = 128;
    using Counters = PerThreadFamily<CounterCell, label_sets_per_thread>;

    Counters requests_{
        "path=\"other\",code=\"0\",operation=\"other\",verdict=\"other\",dry_run=\"false\""};
    PerThreadFamily<HistogramCell, 16> latency_{"other"};  // by path
    Counters findings_{"rule=\"other\",severity=\"other\",enforced=\"other\""};
    Counters unjudged_{"kind=\"other\""};
    Counters lookups_{"result=\"other\""};
    Counters cache_updates_{"kind=\"other\",update=\"other\""};
    void write_audit(std::string& out) const;

    // Set by the audit on the control thread, never on the request path.
    struct AuditGauges {
        bool ran = false;
        std::map<std::string, std::size_t> violations;  // label set -> findings
        std::size_t objects = 0;
        std::size_t refused = 0;
        double finished_unix_seconds = 0;
        double seconds = 0;
    };
    mutable std::mutex audit_mutex_;
    AuditGauges audit_;
    // Set by the cluster cache on its own thread, never on the request path.
    mutable std::mutex cache_synced_mutex_;
    std::map<std::string, std::uint64_t> cache_synced_;  // kind -> 0 or 1
    std::atomic<std::uint64_t> panics_{0};
    std::atomic<std::uint64_t> tls_handshake_failures_{0};
    std::atomic<std::uint64_t> connections_rejected_{0};
    std::atomic<std::uint64_t> certificate_reloads_{0};
    std::atomic<std::uint64_t> certificate_reload_errors_{0};
    std::atomic<std::int64_t> certificate_expiry_{0};
    std::atomic<std::int64_t> inflight_{0};
    std::atomic<std::int64_t> connections_{0};
};

}  // namespace mdadmit::server
