// Metrics counted per thread without a lock: the scrape sums every thread's counts, keeps the
// histogram cumulative, and a flood of label sets shares one overflow sample.
#include "metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace mdadmit::test {
namespace {

// The value of the sample whose line starts with `series ` in the exposition text.
std::string sample_value(const std::string& text, const std::string& series) {
    const std::string prefix = series + " ";
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(at, end - at);
        if (line.rfind(prefix, 0) == 0) {
            return line.substr(prefix.size());
        }
        at = end == std::string::npos ? text.size() : end + 1;
    }
    return "absent";
}

TEST(Metrics, CountsFromManyThreadsAreSummedAtScrape) {
    server::Metrics metrics;
    constexpr int threads = 8;
    constexpr int per_thread = 5000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                metrics.observe_request({"/validate", 200, "CREATE", "allowed", false},
                                        std::chrono::microseconds(t % 2 == 0 ? 50 : 2000));
                metrics.count_finding("parallelism", "deny", true);
            }
        });
    }
    // Scrapes while the workers count: the totals only grow.
    std::uint64_t last = 0;
    for (int scrape = 0; scrape < 20; ++scrape) {
        const std::string value = sample_value(
            metrics.exposition(),
            "mdadmit_findings_total{rule=\"parallelism\",severity=\"deny\",enforced=\"true\"}");
        const std::uint64_t now = value == "absent" ? 0 : std::stoull(value);
        EXPECT_GE(now, last);
        last = now;
    }
    for (auto& worker : workers) {
        worker.join();
    }
    const std::string text = metrics.exposition();
    const std::string total = std::to_string(threads * per_thread);
    EXPECT_EQ(sample_value(text,
                           "mdadmit_requests_total{path=\"/validate\",code=\"200\","
                           "operation=\"CREATE\",verdict=\"allowed\",dry_run=\"false\"}"),
              total);
    EXPECT_EQ(
        sample_value(
            text,
            "mdadmit_findings_total{rule=\"parallelism\",severity=\"deny\",enforced=\"true\"}"),
        total);
    // Half the observations took 50 us, half 2 ms: cumulative buckets.
    const std::string half = std::to_string(threads / 2 * per_thread);
    EXPECT_EQ(sample_value(text,
                           "mdadmit_request_duration_seconds_bucket{path=\"/validate\","
                           "le=\"0.0001\"}"),
              half);
    EXPECT_EQ(sample_value(text,
                           "mdadmit_request_duration_seconds_bucket{path=\"/validate\","
                           "le=\"0.001\"}"),
              half);
    EXPECT_EQ(sample_value(text,
                           "mdadmit_request_duration_seconds_bucket{path=\"/validate\","
                           "le=\"0.0025\"}"),
              total);
    EXPECT_EQ(sample_value(text,
                           "mdadmit_request_duration_seconds_bucket{path=\"/validate\","
                           "le=\"+Inf\"}"),
              total);
    EXPECT_EQ(sample_value(text, "mdadmit_request_duration_seconds_count{path=\"/validate\"}"),
              total);
}

TEST(Metrics, LabelValuesAreEscapedAndEachCallCountsUnderItsOwnLabels) {
    server::Metrics metrics;
    // A kind is the client's text: quote, backslash and newline are escaped, as the exposition
    // format requires.
    metrics.count_unjudged_kind("Odd\"Kind\\With\nBreak");
    // Label sets of different lengths, one after the other on one thread: each is counted
    // under its own text, none under a rest of the one before.
    metrics.count_finding("router-policy-value", "deny", true);
    metrics.count_finding("ports", "warn", false);
    metrics.observe_request({"/mutate", 200, "CREATE", "allowed", true},
                            std::chrono::microseconds(5));
    metrics.count_lookup("hit");
    metrics.count_finding("router-policy-value", "deny", true);
    const std::string text = metrics.exposition();
    EXPECT_EQ(
        sample_value(text, "mdadmit_unjudged_kind_total{kind=\"Odd\\\"Kind\\\\With\\nBreak\"}"),
        "1");
    EXPECT_EQ(sample_value(text,
                           "mdadmit_findings_total{rule=\"router-policy-value\",severity=\"deny\","
                           "enforced=\"true\"}"),
              "2");
    EXPECT_EQ(
        sample_value(text,
                     "mdadmit_findings_total{rule=\"ports\",severity=\"warn\",enforced=\"false\"}"),
        "1");
    EXPECT_EQ(
        sample_value(text,
                     "mdadmit_requests_total{path=\"/mutate\",code=\"200\",operation=\"CREATE\","
                     "verdict=\"allowed\",dry_run=\"true\"}"),
        "1");
}

TEST(Metrics, ManyLabelSetsShareTheOverflowSampleInsteadOfGrowing) {
    server::Metrics metrics;
    for (int i = 0; i < 1000; ++i) {
        metrics.count_unjudged_kind("Kind" + std::to_string(i));
    }
    const std::string text = metrics.exposition();
    EXPECT_EQ(sample_value(text, "mdadmit_unjudged_kind_total{kind=\"Kind0\"}"), "1");
    EXPECT_EQ(sample_value(text, "mdadmit_unjudged_kind_total{kind=\"Kind999\"}"), "absent");
    EXPECT_EQ(sample_value(text, "mdadmit_unjudged_kind_total{kind=\"other\"}"), "872");
    const std::string before = metrics.exposition();
    for (int i = 1000; i < 2000; ++i) {
        metrics.count_unjudged_kind("Kind" + std::to_string(i));
    }
    EXPECT_EQ(metrics.exposition().size(), before.size() + 1);  // 872 -> 1872
}

}  // namespace
}  // namespace mdadmit::test
