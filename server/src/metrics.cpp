#include "metrics.hpp"

#include <cassert>
#include <charconv>
#include <functional>
#include <map>

namespace mdadmit::server {

namespace {

// Appends a label value escaped for the exposition format (backslash, quote, newline).
void append_escaped(std::string& out, std::string_view value) {
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
}

// The text of one label set (name="value",...), composed in a per-thread buffer that keeps its
// capacity: counting a request or a finding allocates nothing once the thread has composed a
// label set as long. One is alive at a time on a thread (each counting function makes one and
// hands its view to a family, which copies it the first time it sees it).
class LabelText {
  public:
    LabelText() : text_(scratch()) {
        assert(!composing() && "one LabelText at a time per thread: they share the buffer");
        composing() = true;
        text_.clear();
    }
    ~LabelText() { composing() = false; }
    LabelText(const LabelText&) = delete;
    LabelText& operator=(const LabelText&) = delete;

    LabelText& add(std::string_view name, std::string_view value) {
        if (!text_.empty()) {
            text_ += ',';
        }
        text_ += name;
        text_ += "=\"";
        append_escaped(text_, value);
        text_ += '"';
        return *this;
    }
    std::string_view view() const { return text_; }

  private:
    static std::string& scratch() {
        thread_local std::string text;
        return text;
    }
    static bool& composing() {
        thread_local bool alive = false;
        return alive;
    }
    std::string& text_;
};

// The shortest text that reads back as the same double: le="0.0025", not 0.0025000000000000001.
std::string number(double value) {
    char text[400];  // room for any double in fixed notation
    const auto written = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
    return std::string(text, written.ptr);
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

// A counter family with one sample per label set, summed over the threads that counted it.
template <typename Family>
void counters(std::string& out, std::string_view name, std::string_view help,
              const Family& samples) {
    std::map<std::string, std::uint64_t, std::less<>> totals;
    samples.for_each([&](std::string_view labels, const auto& cell) {
        const auto count = cell.count.load(std::memory_order_relaxed);
        const auto at = totals.find(labels);
        if (at == totals.end()) {
            totals.emplace(std::string(labels), count);
        } else {
            at->second += count;
        }
    });
    family(out, name, "counter", help);
    for (const auto& [labels, count] : totals) {
        sample(out, name, labels, std::to_string(count));
    }
}

}  // namespace

bool Metrics::HistogramCell::empty() const {
    for (const auto& bucket : buckets) {
        if (bucket.load(std::memory_order_relaxed) != 0) {
            return false;
        }
    }
    return true;
}

void Metrics::observe_request(const RequestLabels& labels, std::chrono::nanoseconds latency) {
    char code[12];
    const auto code_end = std::to_chars(code, code + sizeof code, labels.code).ptr;
    add_owned(requests_
                  .cell(LabelText()
                            .add("path", labels.path)
                            .add("code", std::string_view(code, code_end))
                            .add("operation", labels.operation)
                            .add("verdict", labels.verdict)
                            .add("dry_run", labels.dry_run ? "true" : "false")
                            .view())
                  .count);

    const double seconds = std::chrono::duration<double>(latency).count();
    HistogramCell& histogram = latency_.cell(labels.path);
    std::size_t bucket = 0;
    while (bucket < latency_buckets.size() && seconds > latency_buckets[bucket]) {
        ++bucket;
    }
    add_owned(histogram.buckets[bucket]);
    histogram.sum.store(histogram.sum.load(std::memory_order_relaxed) + seconds,
                        std::memory_order_relaxed);
}

void Metrics::count_finding(std::string_view rule, std::string_view severity, bool enforced) {
    add_owned(findings_
                  .cell(LabelText()
                            .add("rule", rule)
                            .add("severity", severity)
                            .add("enforced", enforced ? "true" : "false")
                            .view())
                  .count);
}

void Metrics::count_unjudged_kind(std::string_view kind) {
    add_owned(unjudged_.cell(LabelText().add("kind", kind).view()).count);
}

void Metrics::count_lookup(std::string_view result) {
    add_owned(lookups_.cell(LabelText().add("result", result).view()).count);
}

void Metrics::count_cache_update(std::string_view kind, std::string_view update) {
    add_owned(
        cache_updates_.cell(LabelText().add("kind", kind).add("update", update).view()).count);
}

void Metrics::set_cache_synced(std::string_view kind, bool synced) {
    const std::lock_guard lock(cache_synced_mutex_);
    cache_synced_[std::string(LabelText().add("kind", kind).view())] = synced ? 1 : 0;
}

void Metrics::set_audit(const admission::AuditTally& tally, double finished_unix_seconds,
                        double seconds) {
    const std::lock_guard lock(audit_mutex_);
    for (auto& [labels, count] : audit_.violations) {
        count = 0;
    }
    for (const auto& [key, count] : tally.violations) {
        const auto& [rule, severity, enforced] = key;
        audit_.violations[std::string(LabelText()
                                          .add("rule", rule)
                                          .add("severity", rules::to_string(severity))
                                          .add("enforced", enforced ? "true" : "false")
                                          .view())] = count;
    }
    audit_.ran = true;
    audit_.objects = tally.objects;
    audit_.refused = tally.refused;
    audit_.finished_unix_seconds = finished_unix_seconds;
    audit_.seconds = seconds;
}

void Metrics::write_audit(std::string& out) const {
    const std::lock_guard lock(audit_mutex_);
    if (!audit_.ran) {
        return;
    }
    family(out, "mdadmit_audit_violations", "gauge",
           "Findings on the stored ModelDeployments at the last audit, by rule, severity and "
           "whether the rule is enforced.");
    for (const auto& [labels, count] : audit_.violations) {
        sample(out, "mdadmit_audit_violations", labels, std::to_string(count));
    }
    family(out, "mdadmit_audit_objects", "gauge", "ModelDeployments judged by the last audit.");
    sample(out, "mdadmit_audit_objects", "", std::to_string(audit_.objects));
    family(out, "mdadmit_audit_refused_objects", "gauge",
           "ModelDeployments the last audit found the rules would refuse.");
    sample(out, "mdadmit_audit_refused_objects", "", std::to_string(audit_.refused));
    family(out, "mdadmit_audit_last_run_timestamp_seconds", "gauge",
           "Unix time at which the last audit finished.");
    sample(out, "mdadmit_audit_last_run_timestamp_seconds", "",
           number(audit_.finished_unix_seconds));
    family(out, "mdadmit_audit_duration_seconds", "gauge", "How long the last audit took.");
    sample(out, "mdadmit_audit_duration_seconds", "", number(audit_.seconds));
}

void Metrics::count_certificate_reload(bool ok) {
    (ok ? certificate_reloads_ : certificate_reload_errors_)
        .fetch_add(1, std::memory_order_relaxed);
}

void Metrics::write_latency(std::string& out) const {
    struct Total {
        std::array<std::uint64_t, latency_buckets.size() + 1> buckets{};
        double sum = 0;
    };
    std::map<std::string, Total, std::less<>> totals;  // path -> summed over threads
    latency_.for_each([&](std::string_view path, const HistogramCell& cell) {
        auto at = totals.find(path);
        if (at == totals.end()) {
            at = totals.emplace(std::string(path), Total{}).first;
        }
        for (std::size_t i = 0; i < cell.buckets.size(); ++i) {
            at->second.buckets[i] += cell.buckets[i].load(std::memory_order_relaxed);
        }
        at->second.sum += cell.sum.load(std::memory_order_relaxed);
    });
    family(out, "mdadmit_request_duration_seconds", "histogram",
           "Time from a request's last byte read to its answer written.");
    for (const auto& [path, total] : totals) {
        const std::string path_label(LabelText().add("path", path).view());
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
            cumulative += total.buckets[i];
            sample(out, "mdadmit_request_duration_seconds_bucket",
                   path_label + ",le=\"" + number(latency_buckets[i]) + "\"",
                   std::to_string(cumulative));
        }
        cumulative += total.buckets.back();
        sample(out, "mdadmit_request_duration_seconds_bucket", path_label + ",le=\"+Inf\"",
               std::to_string(cumulative));
        sample(out, "mdadmit_request_duration_seconds_sum", path_label, number(total.sum));
        sample(out, "mdadmit_request_duration_seconds_count", path_label,
               std::to_string(cumulative));
    }
}

std::string Metrics::exposition() const {
    std::string out;
    counters(out, "mdadmit_requests_total",
             "HTTP requests answered, by path, status code, operation, verdict and dry run.",
             requests_);
    write_latency(out);
    counters(out, "mdadmit_findings_total",
             "Rule findings reported, by rule, severity and whether the rule is enforced (false: a "
             "deny reported as a warning by staged enforcement).",
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
    {
        const std::lock_guard lock(cache_synced_mutex_);
        for (const auto& [labels, synced] : cache_synced_) {
            sample(out, "mdadmit_cluster_cache_synced", labels, std::to_string(synced));
        }
    }
    write_audit(out);
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
