// The manifests a cluster admin applies, rendered with `kubectl kustomize` and checked
// against what the server and the Kubernetes API expect of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "kustomize.hpp"
#include "mdadmit/admission/audit.hpp"
#include "mdadmit/admission/policy_report.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/arg_stream.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;

class Rendered {
  public:
    explicit Rendered(const std::string& directory) {
        const std::string text = kustomize(MDADMIT_SOURCE_DIR, directory);
        auto documents = inputs::parse_documents(text, directory);
        if (!documents) {
            throw std::runtime_error("kubectl kustomize " + directory + ": " +
                                     documents.error().message);
        }
        for (auto& document : documents.value()) {
            objects_.push_back(std::move(document.value));
        }
    }
    const json::value& get(std::string_view kind, std::string_view name = "") const {
        for (const auto& object : objects_) {
            if (object.at("kind").as_string() == kind &&
                (name.empty() || object.at("metadata").at("name").as_string() == name)) {
                return object;
            }
        }
        throw std::runtime_error("no " + std::string(kind) + " " + std::string(name));
    }
    std::size_t count(std::string_view kind) const {
        return std::count_if(objects_.begin(), objects_.end(), [&](const json::value& o) {
            return o.at("kind").as_string() == kind;
        });
    }

  private:
    std::vector<json::value> objects_;
};

const json::value& at(const json::value& value, std::string_view pointer) {
    return value.at_pointer(pointer);
}

std::vector<std::string> strings(const json::value& array) {
    std::vector<std::string> out;
    for (const auto& item : array.as_array()) {
        out.emplace_back(item.as_string());
    }
    return out;
}

// The value of --name=value among a container's args.
std::string flag(const json::value& container, std::string_view name) {
    const auto args = strings(container.at("args"));
    const rules::ArgStream stream(args);
    const auto* found = stream.last({name});
    return found != nullptr && found->value ? std::string(*found->value) : std::string();
}

// Rendered with kubectl, which tools/setup.sh installs where there is none: these run in CI.
class Manifests : public testing::Test {};

TEST_F(Manifests, TheDeploymentIsHardenedProbedAndSized) {
    const Rendered base("manifests/base");
    const json::value& deployment = base.get("Deployment", "mdadmit");
    EXPECT_EQ(at(deployment, "/spec/replicas"), 2);
    EXPECT_EQ(at(deployment, "/spec/strategy/rollingUpdate/maxUnavailable"), 0);
    const json::value& pod = at(deployment, "/spec/template/spec");
    EXPECT_EQ(at(pod, "/securityContext/runAsNonRoot"), true);
    EXPECT_EQ(at(pod, "/securityContext/seccompProfile/type"), "RuntimeDefault");
    EXPECT_FALSE(at(pod, "/affinity/podAntiAffinity").as_object().empty());
    const json::value& container = at(pod, "/containers/0");
    EXPECT_EQ(at(container, "/securityContext/readOnlyRootFilesystem"), true);
    EXPECT_EQ(at(container, "/securityContext/allowPrivilegeEscalation"), false);
    EXPECT_EQ(strings(at(container, "/securityContext/capabilities/drop")),
              std::vector<std::string>{"ALL"});
    EXPECT_TRUE(at(container, "/resources/requests").as_object().contains("memory"));
    EXPECT_TRUE(at(container, "/resources/limits").as_object().contains("memory"));
    // Probes on real paths of the plain port the server is told to listen on.
    EXPECT_EQ(at(container, "/livenessProbe/httpGet/path"), "/healthz");
    EXPECT_EQ(at(container, "/readinessProbe/httpGet/path"), "/readyz");
    EXPECT_EQ(at(container, "/readinessProbe/httpGet/port"), "health");
    std::map<std::string, std::int64_t> ports;
    for (const auto& port : at(container, "/ports").as_array()) {
        ports[std::string(port.at("name").as_string())] = port.at("containerPort").as_int64();
    }
    EXPECT_EQ(flag(container, "--health-listen"), "0.0.0.0:" + std::to_string(ports.at("health")));
    EXPECT_EQ(flag(container, "--listen"), "0.0.0.0:" + std::to_string(ports.at("https")));
    // The kubelet waits longer than the server's shutdown delay plus drain.
    const auto seconds = [&](std::string_view name) { return std::stoi(flag(container, name)); };
    EXPECT_GT(at(pod, "/terminationGracePeriodSeconds").as_int64(),
              seconds("--shutdown-delay") + seconds("--drain-timeout"));
    // The certificate Secret is mounted where the server reads it.
    EXPECT_EQ(at(pod, "/volumes/0/secret/secretName"), "mdadmit-tls");
    EXPECT_EQ(flag(container, "--cert-file")
                  .rfind(std::string(at(container, "/volumeMounts/0/mountPath").as_string()), 0),
              0u);
}

TEST_F(Manifests, SelectorsMatchThePodsAndTheServiceReachesTheTlsPort) {
    const Rendered base("manifests/base");
    const json::value& labels =
        at(base.get("Deployment", "mdadmit"), "/spec/template/metadata/labels");
    for (const json::value* selector :
         {&at(base.get("Service", "mdadmit"), "/spec/selector"),
          &at(base.get("PodDisruptionBudget", "mdadmit"), "/spec/selector/matchLabels"),
          &at(base.get("Deployment", "mdadmit"), "/spec/selector/matchLabels")}) {
        for (const auto& [key, value] : selector->as_object()) {
            EXPECT_EQ(labels.at(key), value) << key;
        }
    }
    const json::value& service = base.get("Service", "mdadmit");
    EXPECT_EQ(at(service, "/spec/ports/0/port"), 443);
    EXPECT_EQ(at(service, "/spec/ports/0/targetPort"), "https");
}

TEST_F(Manifests, TheClusterRoleReadsModelDeploymentsAndInstanceTypesOnly) {
    const Rendered base("manifests/base");
    const json::value& rules = at(base.get("ClusterRole", "mdadmit"), "/rules");
    ASSERT_EQ(rules.as_array().size(), 1u);
    EXPECT_EQ(strings(at(rules, "/0/apiGroups")), std::vector<std::string>{"worker.gpustack.ai"});
    EXPECT_EQ(strings(at(rules, "/0/resources")),
              (std::vector<std::string>{"modeldeployments", "instancetypes"}));
    EXPECT_EQ(strings(at(rules, "/0/verbs")), (std::vector<std::string>{"get", "list", "watch"}));
    EXPECT_EQ(at(base.get("ClusterRoleBinding", "mdadmit"), "/subjects/0/name"), "mdadmit");
}

TEST_F(Manifests, TheValidatingWebhookIsFailClosedShortAndDryRunSafe) {
    const Rendered base("manifests/base");
    const json::value& webhook =
        at(base.get("ValidatingWebhookConfiguration", "mdadmit"), "/webhooks/0");
    EXPECT_EQ(at(webhook, "/sideEffects"), "None");
    EXPECT_EQ(strings(at(webhook, "/admissionReviewVersions")),
              (std::vector<std::string>{"v1", "v1beta1"}));
    EXPECT_EQ(at(webhook, "/failurePolicy"), "Fail");
    EXPECT_EQ(at(webhook, "/matchPolicy"), "Equivalent");
    EXPECT_LE(at(webhook, "/timeoutSeconds").as_int64(), 5);
    EXPECT_EQ(strings(at(webhook, "/rules/0/apiVersions")),
              (std::vector<std::string>{"v1", "v1alpha1"}));
    EXPECT_EQ(strings(at(webhook, "/rules/0/operations")),
              (std::vector<std::string>{"CREATE", "UPDATE"}));
    EXPECT_EQ(strings(at(webhook, "/namespaceSelector/matchExpressions/0/values")),
              (std::vector<std::string>{"mdadmit-system", "kube-system"}));
    EXPECT_EQ(at(webhook, "/clientConfig/service/name"), at(base.get("Service"), "/metadata/name"));
    EXPECT_EQ(at(webhook, "/clientConfig/service/path"), "/validate");
}

TEST_F(Manifests, TheMutatingWebhookSelectsOnlyModelDeploymentPods) {
    const Rendered base("manifests/base");
    const json::value& webhooks =
        at(base.get("MutatingWebhookConfiguration", "mdadmit"), "/webhooks");
    ASSERT_EQ(webhooks.as_array().size(), 2u);
    EXPECT_EQ(at(webhooks, "/0/objectSelector/matchLabels/app.kubernetes.io~1name"),
              "model-deployment");
    EXPECT_EQ(at(webhooks, "/1/objectSelector/matchExpressions/0/key"),
              "modeldeployment.gpustack.ai/router");
    for (const auto& webhook : webhooks.as_array()) {
        EXPECT_EQ(at(webhook, "/reinvocationPolicy"), "IfNeeded");
        EXPECT_LE(at(webhook, "/timeoutSeconds").as_int64(), 2);
        EXPECT_EQ(at(webhook, "/failurePolicy"), "Ignore");
        EXPECT_EQ(at(webhook, "/clientConfig/service/path"), "/mutate");
        EXPECT_EQ(strings(at(webhook, "/rules/0/resources")), std::vector<std::string>{"pods"});
    }
}

TEST_F(Manifests, TheCertManagerOverlayIssuesForTheServiceAndInjectsTheCa) {
    const Rendered overlay("manifests/overlays/cert-manager");
    const json::value& certificate = overlay.get("Certificate", "mdadmit-serving");
    EXPECT_EQ(strings(at(certificate, "/spec/dnsNames")),
              (std::vector<std::string>{"mdadmit.mdadmit-system.svc",
                                        "mdadmit.mdadmit-system.svc.cluster.local"}));
    EXPECT_EQ(at(certificate, "/spec/secretName"),
              at(overlay.get("Deployment", "mdadmit"),
                 "/spec/template/spec/volumes/0/secret/secretName"));
    EXPECT_EQ(at(certificate, "/spec/privateKey/algorithm"), "ECDSA");
    for (const char* kind : {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}) {
        EXPECT_EQ(at(overlay.get(kind, "mdadmit"),
                     "/metadata/annotations/cert-manager.io~1inject-ca-from"),
                  "mdadmit-system/mdadmit-serving");
    }
    EXPECT_EQ(overlay.count("Issuer"), 2u);
}

TEST_F(Manifests, ThePolicyReportsOverlayGrantsTheWritesAndSwitchesThemOn) {
    const Rendered overlay("manifests/overlays/policy-reports");
    const auto args =
        strings(at(overlay.get("Deployment", "mdadmit"), "/spec/template/spec/containers/0/args"));
    EXPECT_NE(std::find(args.begin(), args.end(), "--policy-reports=on"), args.end());
    const json::value& reports = overlay.get("ClusterRole", "mdadmit-policy-reports");
    EXPECT_EQ(strings(at(reports, "/rules/0/apiGroups")),
              std::vector<std::string>{"wgpolicyk8s.io"});
    EXPECT_EQ(strings(at(reports, "/rules/0/verbs")),
              (std::vector<std::string>{"get", "list", "create", "update"}));
    // The Lease lives in the webhook's namespace, the server's --lease-namespace default.
    const json::value& lease = overlay.get("Role", "mdadmit-leader-election");
    EXPECT_EQ(at(lease, "/metadata/namespace"), "mdadmit-system");
    EXPECT_EQ(strings(at(lease, "/rules/0/resources")), std::vector<std::string>{"leases"});
    for (const char* binding : {"ClusterRoleBinding", "RoleBinding"}) {
        const json::value& bound = binding == std::string("RoleBinding")
                                       ? overlay.get(binding, "mdadmit-leader-election")
                                       : overlay.get(binding, "mdadmit-policy-reports");
        EXPECT_EQ(at(bound, "/subjects/0/name"), "mdadmit");
        EXPECT_EQ(at(bound, "/subjects/0/namespace"), "mdadmit-system");
    }
    EXPECT_EQ(overlay.count("CustomResourceDefinition"), 1u);
    // The base alone writes nothing.
    const Rendered base("manifests/base");
    EXPECT_EQ(base.count("Role"), 0u);
    EXPECT_EQ(base.count("ClusterRole"), 1u);
}

// A report as the server writes it is one the PolicyReport CRD admits.
TEST_F(Manifests, ReportsMatchThePolicyReportCrd) {
    const Rendered overlay("manifests/overlays/policy-reports");
    const json::value& schema =
        at(overlay.get("CustomResourceDefinition"), "/spec/versions/0/schema/openAPIV3Schema");
    auto documents = inputs::read_documents(std::string(MDADMIT_SOURCE_DIR) +
                                            "/test/data/stored-modeldeployments.json");
    ASSERT_TRUE(documents.ok());
    const rules::Engine engine = rules::Engine::with_embedded_data();
    std::vector<admission::AuditedObject> objects;
    for (const auto& document : documents.value()) {
        objects.push_back(admission::audited(
            document.value, admission::audit_object(engine, document.value, nullptr)));
    }
    const std::vector<const admission::AuditedObject*> team_b{&objects[1], &objects[2]};
    const json::value report =
        admission::policy_report("team-b", team_b, engine.data(), 1767225600);
    EXPECT_EQ(report.at("results").as_array().size(), 3u);

    valijson::Schema compiled;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
    parser.populateSchema(valijson::adapters::BoostJsonAdapter(schema), compiled);
    valijson::Validator validator;
    valijson::ValidationResults results;
    EXPECT_TRUE(
        validator.validate(compiled, valijson::adapters::BoostJsonAdapter(report), &results));
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        ADD_FAILURE() << error.description;
    }
    // And the schema does refuse a result the CRD does not know.
    json::value wrong = report;
    wrong.at("results").at(0).as_object()["result"] = "denied";
    EXPECT_FALSE(
        validator.validate(compiled, valijson::adapters::BoostJsonAdapter(wrong), nullptr));
}

}  // namespace
}  // namespace mdadmit::test
