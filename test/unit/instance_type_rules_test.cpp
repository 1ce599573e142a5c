// What a role asks of its InstanceType's pool, and how InstanceType objects are read.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mdadmit/rules/instance_type.hpp"
#include "support.hpp"

namespace mdadmit::test {
namespace {

using rules::Severity;

// An acceleratable NVIDIA pool of 8 whole cards, sliceable, with two partition profiles.
std::string pool(std::string_view name, std::string_view group = "nvidia-h20",
                 std::string_view extra_status = "") {
    return "kind: InstanceType\nmetadata: {name: " + std::string(name) +
           "}\nspec: {acceleratable: true, acceleratorGroup: " + std::string(group) +
           "}\nstatus:\n  detail:\n    manufacturer: nvidia\n    slicedDetail:\n"
           "      logical: {count: 16}\n"
           "      physical: {count: 7, profiles: [{name: 1g.10gb, count: 28}, {name: 2g.20gb, "
           "count: 12}]}\n  accelerator: {capacity: '8'}\n" +
           std::string(extra_status) + "---\n";
}

// A pool that offers neither slicing nor partitions.
std::string plain_pool(std::string_view name) {
    return "kind: InstanceType\nmetadata: {name: " + std::string(name) +
           "}\nspec: {acceleratable: true, acceleratorGroup: nvidia-a100}\nstatus: {detail: "
           "{manufacturer: nvidia}, accelerator: {capacity: '8'}}\n---\n";
}

std::string cpu_pool(std::string_view name) {
    return "kind: InstanceType\nmetadata: {name: " + std::string(name) +
           "}\nspec: {acceleratable: false}\nstatus: {detail: {manufacturer: intel}}\n---\n";
}

std::vector<rules::Finding> judged(std::string_view rule, const std::string& types,
                                   std::string_view roles, std::string_view engine = "vLLM") {
    return of_rule(judge(types + deployment(engine, "", roles)), rule);
}

TEST(InstanceTypeDecode, ReadsWhatThePoolRulesNeed) {
    const auto object = boost::json::parse(R"({"metadata": {"name": "h20"},
        "spec": {"acceleratable": true, "acceleratorGroup": "nvidia-h20"},
        "status": {"detail": {"manufacturer": "nvidia", "slicedDetail": {
            "logical": {"count": 16}, "physical": {"count": 0, "profiles": [{"name": "1g.10gb"}]}}},
          "accelerator": {"capacity": "8", "onceMaxRequest": "0"}}})");
    const auto decoded = rules::decode_instance_type(object);
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->name, "h20");
    EXPECT_TRUE(decoded->type.acceleratable);
    EXPECT_EQ(decoded->type.accelerator_group, "nvidia-h20");
    EXPECT_EQ(decoded->type.platform(), rules::Platform::nvidia);
    EXPECT_TRUE(decoded->type.logical_slicing);
    EXPECT_FALSE(decoded->type.partitioning);
    EXPECT_TRUE(decoded->type.offers_profile("1g.10gb"));
    EXPECT_EQ(decoded->type.capacity->whole_count(), 8);
    // Fields of the wrong type read as absent; a nameless object is no InstanceType.
    const auto odd = rules::decode_instance_type(boost::json::parse(
        R"({"metadata": {"name": "x"}, "spec": {"acceleratable": "yes"},
            "status": {"accelerator": {"capacity": "lots"}}})"));
    EXPECT_FALSE(odd->type.acceleratable);
    EXPECT_FALSE(odd->type.capacity.has_value());
    EXPECT_FALSE(rules::decode_instance_type(boost::json::parse("{}")).has_value());
}

TEST(InstanceTypeExists, ARoleNamingNoTypeOfTheClusterIsRefused) {
    const auto found = judged("instance-type-exists", pool("h20"),
                              "[{name: a, instanceType: h20}, {name: b, instanceType: gone}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].severity, Severity::deny);
    EXPECT_EQ(found[0].path, "spec.roles[1].instanceType");
    EXPECT_EQ(found[0].message, "InstanceType `gone` of role `b` does not exist");
    EXPECT_EQ(found[0].hint, "name an InstanceType of the cluster (kubectl get instancetypes)");
    // Without the cluster's InstanceTypes nothing can be said.
    EXPECT_TRUE(judged("instance-type-exists", "", "[{name: b, instanceType: gone}]").empty());
}

TEST(InstanceTypeCapacity, WholeCardsFitThePool) {
    const auto found = judged("instance-type-capacity", pool("h20"),
                              "[{name: s, instanceType: h20, resources: {accelerator: '9'}}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(found[0].message,
              "role `s` asks for 9 whole accelerators; InstanceType `h20` has 8 in its pool");
    EXPECT_EQ(found[0].hint, "ask for at most 8, or choose a larger InstanceType");
    // At the ceiling, a fraction under it, and a CPU-only or uncomputed pool are admitted.
    for (const char* count : {"8", "'8000m'", "'1500m'"}) {
        EXPECT_TRUE(judged("instance-type-capacity", pool("h20"),
                           "[{name: s, instanceType: h20, resources: {accelerator: " +
                               std::string(count) + "}}]")
                        .empty())
            << count;
    }
    EXPECT_EQ(judged("instance-type-capacity", pool("h20"),
                     "[{name: s, instanceType: h20, resources: {accelerator: '8500m'}}]")
                  .size(),
              1u);
    EXPECT_TRUE(judged("instance-type-capacity", cpu_pool("cpu"),
                       "[{name: s, instanceType: cpu, resources: {accelerator: 9}}]")
                    .empty());
    EXPECT_TRUE(
        judged("instance-type-capacity",
               "kind: InstanceType\nmetadata: {name: new}\nspec: {acceleratable: true}\n---\n",
               "[{name: s, instanceType: new, resources: {accelerator: 9}}]")
            .empty());
}

TEST(InstanceTypeCapacity, ZeroCardsOnASharedAcceleratableType) {
    const auto found = judged("instance-type-capacity", pool("h20"),
                              "[{name: p, kind: Prefill, instanceType: h20, resources: "
                              "{accelerator: '0'}}, {name: d, kind: Decode, instanceType: h20, "
                              "resources: {accelerator: '1'}}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(found[0].message,
              "role `p` asks for 0 accelerators on `h20`, an acceleratable type its queue counts "
              "only in accelerators");
    // Alone on its type, or on a CPU-only type, zero is fine.
    EXPECT_TRUE(judged("instance-type-capacity", pool("h20"),
                       "[{name: s, instanceType: h20, resources: {accelerator: 0}}]")
                    .empty());
    EXPECT_TRUE(judged("instance-type-capacity", cpu_pool("cpu"),
                       "[{name: a, instanceType: cpu, resources: {accelerator: 0}}, {name: b, "
                       "instanceType: cpu, resources: {accelerator: 0}}]")
                    .empty());
}

TEST(InstanceTypeSlicing, SlicesAndPartitionsTheTypeOffersOnOneCard) {
    const auto plain = judged("instance-type-slicing", plain_pool("a100"),
                              "[{name: s, instanceType: a100, resources: {accelerator: '4', "
                              "acceleratorSlicedCoresPercentage: 50}}]");
    ASSERT_EQ(plain.size(), 2u);
    EXPECT_EQ(plain[0].path, "spec.roles[0].resources.acceleratorSlicedMemoryPercentage");
    EXPECT_EQ(plain[0].message, "InstanceType `a100` of role `s` offers no logical slicing");
    EXPECT_EQ(plain[1].path, "spec.roles[0].resources.accelerator");
    EXPECT_EQ(plain[1].message,
              "role `s` asks for 4 accelerators; a sliced request takes exactly 1");
    const auto profile = judged("instance-type-slicing", pool("h20"),
                                "[{name: s, instanceType: h20, resources: {accelerator: '1', "
                                "acceleratorPartitionedProfile: 7g.80gb}}]");
    ASSERT_EQ(profile.size(), 1u);
    EXPECT_EQ(profile[0].path, "spec.roles[0].resources.acceleratorPartitionedProfile");
    EXPECT_EQ(profile[0].message, "InstanceType `h20` offers no partition profile `7g.80gb`");
    EXPECT_EQ(profile[0].hint, "use one of: 1g.10gb, 2g.20gb");
    EXPECT_EQ(judged("instance-type-slicing", plain_pool("a100"),
                     "[{name: s, instanceType: a100, resources: {accelerator: 1, "
                     "acceleratorPartitionedProfile: 1g.10gb}}]")[0]
                  .message,
              "InstanceType `a100` of role `s` offers no hardware partitions");
    for (const char* offered :
         {"acceleratorSlicedMemoryPercentage: 50", "acceleratorPartitionedProfile: 2g.20gb",
          "acceleratorSlicedMemoryPercentage: 0"}) {
        EXPECT_TRUE(judged("instance-type-slicing", pool("h20"),
                           "[{name: s, instanceType: h20, resources: {accelerator: '1', " +
                               std::string(offered) + "}}]")
                        .empty())
            << offered;
    }
    // Until the operator computes the pool's detail it answers "retry"; nothing is said here.
    EXPECT_TRUE(
        judged("instance-type-slicing",
               "kind: InstanceType\nmetadata: {name: new}\nspec: {acceleratable: true}\n---\n",
               "[{name: s, instanceType: new, resources: {accelerator: 2, "
               "acceleratorSlicedMemoryPercentage: 50}}]")
            .empty());
}

TEST(PdSliceGroup, APairMayNotSliceOneAcceleratorGroup) {
    const std::string types = pool("h20") + pool("h20-mig") + pool("a100", "nvidia-a100");
    const auto found = judged("pd-slice-group", types,
                              "[{name: p, kind: Prefill, instanceType: h20, resources: "
                              "{accelerator: 1, acceleratorSlicedMemoryPercentage: 50}}, {name: "
                              "d, kind: Decode, instanceType: h20-mig, resources: {accelerator: "
                              "1, acceleratorSlicedCoresPercentage: 50}}]");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles");
    EXPECT_EQ(found[0].message,
              "roles `p` and `d` both take logical slices from accelerator group `nvidia-h20`; "
              "both halves could land on one card");
    // Other groups, whole cards, or one sliced half are fine.
    EXPECT_TRUE(judged("pd-slice-group", types,
                       "[{name: p, kind: Prefill, instanceType: h20, resources: {accelerator: 1, "
                       "acceleratorSlicedMemoryPercentage: 50}}, {name: d, kind: Decode, "
                       "instanceType: a100, resources: {accelerator: 1, "
                       "acceleratorSlicedMemoryPercentage: 50}}]")
                    .empty());
    EXPECT_TRUE(judged("pd-slice-group", types,
                       "[{name: p, kind: Prefill, instanceType: h20, resources: {accelerator: 1, "
                       "acceleratorSlicedMemoryPercentage: 50}}, {name: d, kind: Decode, "
                       "instanceType: h20, resources: {accelerator: 1}}]")
                    .empty());
}

TEST(InterfaceTransport, InterfacesNeedAnRdmaOrEfaLeg) {
    const auto found =
        judged("interface-transport", "", "[{name: s, resources: {interface: '2'}}]", "SGLang");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "spec.roles[0].resources.interface");
    EXPECT_EQ(found[0].message,
              "role `s` requests 2 fabric interfaces but has no RDMA or EFA transfer leg to use "
              "them");
    const std::string pair =
        "[{name: p, kind: Prefill, instanceType: h20, resources: {interface: '1'}}, {name: d, "
        "kind: Decode, instanceType: h20}]";
    const auto on = [&](std::string_view protocol) {
        return of_rule(
            judge(pool("h20") +
                  deployment("vLLM", "{name: llm-d-router}", pair,
                             "  kvTransfer: {protocol: " + std::string(protocol) + "}\n")),
            "interface-transport");
    };
    EXPECT_TRUE(on("RDMA").empty());
    EXPECT_TRUE(on("efa").empty());
    ASSERT_EQ(on("TCP").size(), 1u);
    EXPECT_EQ(on("TCP")[0].message,
              "role `p` requests 1 fabric interfaces but has no RDMA or EFA transfer leg to use "
              "them (kvTransfer: tcp)");
    // Zero interfaces ask for nothing; a KV cache pool's members decide, and are not read;
    // a vLLM pair on an unknown type depends on its platform.
    EXPECT_TRUE(
        judged("interface-transport", "", "[{name: s, resources: {interface: 0}}]").empty());
    EXPECT_TRUE(of_rule(judge(deployment("SGLang", "", "[{name: s, resources: {interface: 1}}]",
                                         "  kvCache: {poolRef: {name: pool}}\n")),
                        "interface-transport")
                    .empty());
    EXPECT_TRUE(
        of_rule(judge(deployment("vLLM", "{name: llm-d-router}", pair)), "interface-transport")
            .empty());
    // Without a router the pair renders no direct leg.
    EXPECT_EQ(of_rule(judge(pool("h20") +
                            deployment("vLLM", "", pair, "  kvTransfer: {protocol: RDMA}\n")),
                      "interface-transport")
                  .size(),
              1u);
}

TEST(InstanceTypeRules, SkippedForAnObjectBeingDeleted) {
    const std::string deleting =
        "kind: ModelDeployment\nmetadata: {name: md, namespace: ns, deletionTimestamp: "
        "'2026-01-01T00:00:00Z'}\nspec:\n  model: {name: m}\n  engine: {name: vLLM, version: "
        "\"1\"}\n  roles: [{name: s, instanceType: gone, resources: {accelerator: 9}}, {name: t, "
        "instanceType: h20, resources: {accelerator: 9}}]\n";
    EXPECT_TRUE(judge(pool("h20") + deleting).findings.empty());
}

}  // namespace
}  // namespace mdadmit::test
