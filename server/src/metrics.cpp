#include "metrics.hpp"

#include <cstdio>

namespace mdadmit::server {

std::string escape_label(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

namespace {

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

void sample(std::string& out, std::string_view name, std::string_view labels,
            const std::string& value) {
    out += name;
    if (!labels.empty()) {
        out += '{';
        out += labels;
        out += '}';
    }
    out += ' ';
    out += value;
    out += '\n';
}

// A counter family with one sample per label set.
void counters(std::string& out, std::string_view name, std::string_view help,
              const std::map<std::string, std::uint64_t>& samples) {
    family(out, name, "counter", help);
    for (const auto& [labels, count] : samples) {
        sample(out, name, labels, std::to_string(count));
    }
}

}  // namespace

void Metrics::observe_request(const RequestLabels& labels, std::chrono::nanoseconds latency) {
    std::string key =
        "path=\"" + escape_label(labels.path) + "\",code=\"" + std::to_string(labels.code) +
        "\",operation=\"" + escape_label(labels.operation) + "\",verdict=\"" +
        escape_label(labels.verdict) + "\",dry_run=\"" + (labels.dry_run ? "true" : "false") + "\"";
    const double seconds = std::chrono::duration<double>(latency).count();
    const std::lock_guard lock(mutex_);
    ++requests_[std::move(key)];
    Histogram& histogram = latency_[std::string(labels.path)];
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        if (seconds <= latency_buckets[i]) {
            ++histogram.buckets[i];
        }
    }
    ++histogram.count;
    histogram.sum += seconds;
}

void Metrics::count_finding(std::string_view rule, std::string_view severity) {
    std::string key =
        "rule=\"" + escape_label(rule) + "\",severity=\"" + escape_label(severity) + "\"";
    increment(findings_, std::move(key));
}

void Metrics::count_unjudged_kind(std::string_view kind) {
    std::string key = "kind=\"" + escape_label(kind) + "\"";
    increment(unjudged_, std::move(key));
}

void Metrics::count_lookup(std::string_view result) {
    std::string key = "result=\"" + escape_label(result) + "\"";
    increment(lookups_, std::move(key));
}

void Metrics::count_cache_update(std::string_view kind, std::string_view update) {
    increment(cache_updates_,
              "kind=\"" + escape_label(kind) + "\",update=\"" + escape_label(update) + "\"");
}

void Metrics::set_cache_synced(std::string_view kind, bool synced) {
    const std::lock_guard lock(mutex_);
    cache_synced_["kind=\"" + escape_label(kind) + "\""] = synced ? 1 : 0;
}

void Metrics::increment(std::map<std::string, std::uint64_t>& family, std::string labels) {
    const std::lock_guard lock(mutex_);
    ++family[std::move(labels)];
}

void Metrics::count_certificate_reload(bool ok) {
    (ok ? certificate_reloads_ : certificate_reload_errors_)
        .fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::exposition() const {
    std::string out;
    const std::lock_guard lock(mutex_);
    counters(out, "mdadmit_requests_total",
             "HTTP requests answered, by path, status code, operation, verdict and dry run.",
             requests_);
    family(out, "mdadmit_request_duration_seconds", "histogram",
           "Time from a request's last byte read to its answer written.");
    for (const auto& [path, histogram] : latency_) {
        const std::string path_label = "path=\"" + escape_label(path) + "\"";
        for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
            sample(out, "mdadmit_request_duration_seconds_bucket",
                   path_label + ",le=\"" + number(latency_buckets[i]) + "\"",
                   std::to_string(histogram.buckets[i]));
        }
        sample(out, "mdadmit_request_duration_seconds_bucket", path_label + ",le=\"+Inf\"",
               std::to_string(histogram.count));
        sample(out, "mdadmit_request_duration_seconds_sum", path_label, number(histogram.sum));
        sample(out, "mdadmit_request_duration_seconds_count", path_label,
               std::to_string(histogram.count));
    }
    counters(out, "mdadmit_findings_total", "Rule findings reported, by rule and severity.",
             findings_);
    counters(out, "mdadmit_unjudged_kind_total",
             "Admission requests for a kind this webhook does not judge (allowed unchanged).",
             unjudged_);
    counters(out, "mdadmit_cluster_lookups_total",
             "ModelDeployments read for the mutating path, by result (found, not_found, error).",
             lookups_);
    counters(out, "mdadmit_cluster_cache_updates_total",
             "Changes applied to the cluster cache, by kind and update (list, ADDED, MODIFIED, "
             "DELETED).",
             cache_updates_);
    family(out, "mdadmit_cluster_cache_synced", "gauge",
           "1 once the cluster cache of a kind holds the cluster's state, else 0.");
    for (const auto& [labels, synced] : cache_synced_) {
        sample(out, "mdadmit_cluster_cache_synced", labels, std::to_string(synced));
    }
    const auto scalar = [&](std::string_view name, std::string_view type, std::string_view help,
                            auto value) {
        family(out, name, type, help);
        sample(out, name, "", std::to_string(value));
    };
    scalar("mdadmit_inflight_requests", "gauge", "Requests being handled now.", inflight_.load());
    scalar("mdadmit_open_connections", "gauge", "Client connections open now.",
           connections_.load());
    scalar("mdadmit_connections_rejected_total", "counter",
           "Connections closed at accept: over the connection cap.", connections_rejected_.load());
    scalar("mdadmit_panics_total", "counter",
           "Unexpected exceptions while judging a request (answered with code 500).",
           panics_.load());
    scalar("mdadmit_tls_handshake_failures_total", "counter",
           "TLS handshakes that failed or timed out.", tls_handshake_failures_.load());
    scalar("mdadmit_certificate_reloads_total", "counter",
           "Serving certificates loaded after start-up.", certificate_reloads_.load());
    scalar("mdadmit_certificate_reload_errors_total", "counter",
           "Certificate reloads refused (unreadable, unparsable or mismatched files); the old one "
           "keeps serving.",
           certificate_reload_errors_.load());
    scalar("mdadmit_certificate_expiry_timestamp_seconds", "gauge",
           "Unix time at which the serving certificate expires.", certificate_expiry_.load());
    return out;
}

}  // namespace mdadmit::server
