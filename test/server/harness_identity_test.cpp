// The harness and the live server can never disagree: every case of the conformance suite
// (test/cases/) is judged by both, and the verdicts, field paths, messages and warnings
// must be identical.
#include <gtest/gtest.h>

#include <unistd.h>
#include <boost/json.hpp>

#include <filesystem>

#include "mdadmit/admission/review.hpp"
#include "mdadmit/inputs/test_case.hpp"
#include "mdadmit/rules/pod_patch.hpp"
#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

const std::string suite_directory = std::string(MDADMIT_SOURCE_DIR) + "/test/cases";
const std::string operator_suite_directory = suite_directory + "/operator";

// The documents of one suite directory (its own YAML and JSON files, not those of
// subdirectories).
std::vector<inputs::Document> suite_documents(const std::string& directory) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(directory)) {
        const auto extension = entry.path().extension();
        if (entry.is_regular_file() && (extension == ".yaml" || extension == ".json")) {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    std::vector<inputs::Document> documents;
    for (const auto& file : files) {
        auto read = inputs::read_documents(file);
        EXPECT_TRUE(read.ok()) << read.error().message;
        for (auto& document : read.value()) {
            documents.push_back(std::move(document));
        }
    }
    return documents;
}

std::vector<inputs::TestCase> suite_cases(const std::string& directory) {
    auto cases = inputs::parse_cases(suite_documents(directory));
    EXPECT_TRUE(cases.ok()) << cases.error().message;
    return cases.value();
}

// The suite's cluster, as one file the server reads with --instance-types, and as the
// harness holds it.
struct SuiteCluster {
    std::string file;
    rules::InstanceTypes types;
};

SuiteCluster suite_cluster(const std::string& directory) {
    SuiteCluster cluster;
    cluster.file = testing::TempDir() + "/mdadmit-types-" + std::to_string(::getpid()) + "-" +
                   fs::path(directory).filename().string() + ".yaml";
    std::string manifests = "# the InstanceTypes of " + directory + "\n";
    std::vector<inputs::Document> documents = suite_documents(directory);
    for (const auto& document : documents) {
        const auto* kind =
            document.value.is_object() ? document.value.get_object().if_contains("kind") : nullptr;
        if (kind != nullptr && *kind == "InstanceType") {
            manifests += "---\n" + json::serialize(document.value) + "\n";
        }
    }
    write_file(cluster.file, manifests);
    inputs::collect_instance_types(documents, cluster.types);
    return cluster;
}

std::string review_of(const inputs::TestCase& test_case, std::size_t number) {
    json::object request{
        {"uid", "case-" + std::to_string(number)},
        {"kind", {{"group", "worker.gpustack.ai"}, {"version", "v1"}, {"kind", "ModelDeployment"}}},
        {"operation", test_case.operation == rules::Operation::update ? "UPDATE" : "CREATE"},
        {"object", test_case.object}};
    if (test_case.old_object) {
        request["oldObject"] = *test_case.old_object;
    }
    return json::serialize(json::object{{"apiVersion", "admission.k8s.io/v1"},
                                        {"kind", "AdmissionReview"},
                                        {"request", std::move(request)}});
}

// What the server answered, reduced to what a user sees: verdict, causes, warnings.
struct Seen {
    bool allowed = false;
    std::vector<std::string> causes;  // "field: message"
    std::vector<std::string> warnings;
    bool operator==(const Seen&) const = default;
};

Seen from_server(const std::string& body) {
    const json::value response = json::parse(body).at("response");
    Seen seen;
    seen.allowed = response.at("allowed").as_bool();
    if (const auto* status = response.as_object().if_contains("status")) {
        for (const auto& cause : status->at("details").at("causes").as_array()) {
            seen.causes.push_back(std::string(cause.at("field").as_string()) + ": " +
                                  std::string(cause.at("message").as_string()));
        }
    }
    if (const auto* warnings = response.as_object().if_contains("warnings")) {
        for (const auto& warning : warnings->as_array()) {
            seen.warnings.emplace_back(warning.as_string());
        }
    }
    return seen;
}

Seen from_harness(const rules::Evaluation& evaluation) {
    Seen seen;
    seen.allowed = evaluation.allowed();
    for (const auto* finding : evaluation.with_severity(rules::Severity::deny)) {
        seen.causes.push_back((finding->path.empty() ? "(object)" : finding->path) + ": " +
                              finding->message + " [" + std::string(finding->rule) + "]");
    }
    seen.warnings = admission::warning_lines(evaluation);
    return seen;
}

bool has_schema_finding(const rules::Evaluation& evaluation) {
    return std::any_of(evaluation.findings.begin(), evaluation.findings.end(),
                       [](const rules::Finding& f) { return f.rule == "schema"; });
}

void expect_identical(const std::string& directory, bool full_schema_check) {
    const auto cases = suite_cases(directory);
    ASSERT_GT(cases.size(), 50u);
    const SuiteCluster cluster = suite_cluster(directory);
    ServerFixture fixture([&](server::Config& c) {
        c.full_schema_check = full_schema_check;
        c.instance_types_file = cluster.file;
    });
    // The harness's view: the suite's InstanceTypes and the full structural check.
    const rules::Engine harness = rules::Engine::with_embedded_data();
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    std::size_t compared = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& test_case = cases[i];
        ASSERT_TRUE(test_case.instance_types.empty())
            << test_case.label() << ": suite cases share the suite's InstanceType files";
        if (test_case.pod || !test_case.settings.empty()) {
            // A mutation case is compared through /mutate below; a case with its own settings
            // needs a server started with them, and is the harness's alone.
            continue;
        }
        const auto evaluation = harness.evaluate(
            {test_case.object, test_case.old_object ? &*test_case.old_object : nullptr,
             &cluster.types, test_case.operation});
        if (!full_schema_check && has_schema_finding(evaluation)) {
            continue;  // the default server leaves the full structural check to the API server
        }
        const auto response =
            client.request("POST", "/validate?timeout=10s", review_of(test_case, i));
        ASSERT_EQ(response.status, 200) << test_case.label() << ": " << client.last_error();
        EXPECT_EQ(from_server(response.body), from_harness(evaluation)) << test_case.label();
        ++compared;
    }
    EXPECT_GT(compared, 50u);
}

TEST(HarnessAndServer, AgreeOnEveryCaseWithTheFullSchemaCheck) {
    expect_identical(suite_directory, true);
}

TEST(HarnessAndServer, AgreeOnEveryWellFormedCaseWithTheDefaultCheck) {
    expect_identical(suite_directory, false);
}

// The parity suite: the operator's own test rows and docs examples, in their cluster.
TEST(HarnessAndServer, AgreeOnEveryOperatorParityCase) {
    expect_identical(operator_suite_directory, true);
    expect_identical(operator_suite_directory, false);
}

TEST(HarnessAndServer, SendTheSamePatchForEveryMutationCase) {
    std::vector<inputs::TestCase> mutations;
    for (auto& test_case : suite_cases(suite_directory)) {
        if (test_case.pod) {
            mutations.push_back(std::move(test_case));
        }
    }
    ASSERT_GE(mutations.size(), 5u);
    // The cluster the server reads: every mutation case's ModelDeployment.
    const std::string cluster =
        testing::TempDir() + "/mdadmit-cluster-" + std::to_string(::getpid()) + ".yaml";
    std::string manifests = "# the ModelDeployments of the mutation cases\n";
    for (const auto& test_case : mutations) {
        manifests += "---\n" + json::serialize(test_case.object) + "\n";
    }
    write_file(cluster, manifests);
    const SuiteCluster suite = suite_cluster(suite_directory);
    ServerFixture fixture([&](server::Config& c) {
        c.cluster_files = cluster;
        c.instance_types_file = suite.file;
    });
    const rules::InstanceTypes& types = suite.types;
    const auto data = rules::embedded_rule_data();
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    for (const auto& test_case : mutations) {
        const std::string ns(test_case.object.at("metadata").at("namespace").as_string());
        const std::string review = json::serialize(
            json::object{{"apiVersion", "admission.k8s.io/v1"},
                         {"kind", "AdmissionReview"},
                         {"request",
                          {{"uid", "pod"},
                           {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                           {"operation", "CREATE"},
                           {"namespace", ns},
                           {"object", *test_case.pod}}}});
        const auto response = client.request("POST", "/mutate?timeout=2s", review);
        ASSERT_EQ(response.status, 200) << test_case.label();
        const auto patch = rules::mutate_pod(*test_case.pod, *rules::identify_pod(*test_case.pod),
                                             test_case.object, data, &types);
        const admission::ReviewEnvelope envelope{"admission.k8s.io/v1", "pod"};
        EXPECT_EQ(response.body, patch.empty()
                                     ? admission::allowed_review(envelope)
                                     : admission::patch_review(envelope, json::serialize(patch)))
            << test_case.label();
    }
}

}  // namespace
}  // namespace mdadmit::test
