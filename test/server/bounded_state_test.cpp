// What a hostile client sends stays out of the server's state: 10,000 reviews with random
// operations, kinds and groups leave the metrics' series and the process's memory as they
// were after warm-up. (Its own executable, so ctest can give it a small ASan quarantine: freed
// memory held for use-after-free checks would otherwise count as growth.)
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <random>
#include <set>

#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

long resident_kib() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

// The values that follow `prefix` up to the closing quote, e.g. every operation="..." value.
std::set<std::string> values_after(const std::string& text, const std::string& prefix) {
    std::set<std::string> out;
    for (std::size_t at = text.find(prefix); at != std::string::npos;
         at = text.find(prefix, at + 1)) {
        const std::size_t start = at + prefix.size();
        out.insert(text.substr(start, text.find('"', start) - start));
    }
    return out;
}

class RandomReviews {
  public:
    std::string next() {
        const bool mutate = (count_++ % 2) == 1;
        path_ = mutate ? "/mutate" : "/validate";
        return json::serialize(
            json::object{{"apiVersion", "admission.k8s.io/v1"},
                         {"kind", "AdmissionReview"},
                         {"request",
                          {{"uid", "uid-" + std::to_string(count_)},
                           {"operation", word()},
                           {"kind", {{"group", word()}, {"version", "v1"}, {"kind", word()}}},
                           {"namespace", word()},
                           {"object", json::object{{"metadata", {{"name", word()}}}}}}}});
    }
    const std::string& path() const { return path_; }

  private:
    std::string word() {
        std::uniform_int_distribution<int> length(0, 24);
        std::uniform_int_distribution<int> character(32, 126);
        std::string out(static_cast<std::size_t>(length(random_)), ' ');
        for (char& c : out) {
            c = static_cast<char>(character(random_));
        }
        return out;
    }

    std::mt19937 random_{20261203};
    int count_ = 0;
    std::string path_;
};

TEST(BoundedState, RandomOperationsAndKindsLeaveMetricsAndMemoryFlat) {
    ServerFixture fixture;
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    RandomReviews reviews;
    const auto send = [&](int count) {
        for (int i = 0; i < count; ++i) {
            const std::string body = reviews.next();
            const auto response = client.request("POST", reviews.path(), body);
            ASSERT_EQ(response.status, 200) << body << "\n" << response.body;
        }
    };

    send(1000);
    plain_get(fixture.health_port(), "/metrics");  // a scrape is counted too: one first
    const std::string warm = plain_get(fixture.health_port(), "/metrics").second;
    const long warm_kib = resident_kib();
    send(9000);
    const std::string after = plain_get(fixture.health_port(), "/metrics").second;
    const long after_kib = resident_kib();

    const std::set<std::string> operations{"", "CREATE", "UPDATE", "DELETE", "CONNECT", "other"};
    const auto seen_operations = values_after(after, ",operation=\"");
    for (const auto& operation : seen_operations) {
        EXPECT_EQ(operations.count(operation), 1u) << operation;
    }
    EXPECT_EQ(seen_operations.count("other"), 1u);
    const std::set<std::string> kinds{"other", "/Pod", "worker.gpustack.ai/ModelDeployment",
                                      "worker.gpustack.ai/InstanceType"};
    const auto seen_kinds = values_after(after, "mdadmit_unjudged_kind_total{kind=\"");
    for (const auto& kind : seen_kinds) {
        EXPECT_EQ(kinds.count(kind), 1u) << kind;
    }
    EXPECT_EQ(seen_kinds.count("other"), 1u);
    const auto lines = [](const std::string& text) {
        return std::count(text.begin(), text.end(), '\n');
    };
    EXPECT_EQ(lines(after), lines(warm)) << after;
    EXPECT_LT(after.size(), warm.size() + 200) << "only the counts' digits may grow";
    EXPECT_LT(after_kib - warm_kib, 4096)
        << "resident memory grew from " << warm_kib << " KiB to " << after_kib << " KiB";
}

}  // namespace
}  // namespace mdadmit::test
