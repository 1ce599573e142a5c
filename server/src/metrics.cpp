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
    const std::lock_guard lock(mutex_);
    ++findings_[std::move(key)];
}

void Metrics::count_unjudged_kind(std::string_view kind) {
    std::string key = "kind=\"" + escape_label(kind) + "\"";
    const std::lock_guard lock(mutex_);
    ++unjudged_[std::move(key)];
}

void Metrics::count_lookup(std::string_view result) {
    std::string key = "result=\"" + escape_label(result) + "\"";
    const std::lock_guard lock(mutex_);
    ++lookups_[std::move(key)];
}

void Metrics::count_certificate_reload(bool ok) {
    (ok ? certificate_reloads_ : certificate_reload_errors_)
        .fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::exposition() const {
    std::string out;
    const std::lock_guard lock(mutex_);
    family(out, "mdadmit_requests_total", "counter",
           "HTTP requests answered, by path, status code, operation, verdict and dry run.");
    for (const auto& [labels, count] : requests_) {
        sample(out, "mdadmit_requests_total", labels, std::to_string(count));
    }
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
    family(out, "mdadmit_findings_total", "counter",
           "Rule findings reported, by rule and severity.");
    for (const auto& [labels, count] : findings_) {
        sample(out, "mdadmit_findings_total", labels, std::to_string(count));
    }
    family(out, "mdadmit_unjudged_kind_total", "counter",
           "Admission requests for a kind this webhook does not judge (allowed unchanged).");
    for (const auto& [labels, count] : unjudged_) {
        sample(out, "mdadmit_unjudged_kind_total", labels, std::to_string(count));
    }
    family(out, "mdadmit_cluster_lookups_total", "counter",
           "ModelDeployments read for the mutating path, by result (found, missing).");
    for (const auto& [labels, count] : lookups_) {
        sample(out, "mdadmit_cluster_lookups_total", labels, std::to_string(count));
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
