// mdadmit render: the mutation plan of each ModelDeployment, as the webhook would apply it.
#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/plan.hpp"

namespace mdadmit::cli {

namespace {

namespace json = boost::json;

std::string members(const std::vector<bool>& candidate) {
    if (candidate.size() > 1 &&
        std::all_of(candidate.begin(), candidate.end(), [](bool c) { return c; })) {
        return "every member";
    }
    std::string out;
    for (std::size_t i = 0; i < candidate.size(); ++i) {
        if (candidate[i]) {
            out += (out.empty() ? "member " : ", ") + std::to_string(i);
        }
    }
    return out.empty() ? "none" : out;
}

std::string spelled(const rules::FlagToEnsure& flag) {
    if (flag.value.empty()) {
        return flag.flag;
    }
    return flag.flag + (flag.separate_value ? " " : "=") + flag.value;
}

json::array flags_json(const std::vector<rules::FlagToEnsure>& flags) {
    json::array out;
    for (const auto& flag : flags) {
        out.push_back(json::object{{"container", rules::to_string(flag.target)},
                                   {"flag", flag.flag},
                                   {"value", flag.value},
                                   {"argument", spelled(flag)},
                                   {"reason", flag.reason}});
    }
    return out;
}

void print_text(const rules::Plan& plan, const inputs::Document& document) {
    std::cout << plan.namespace_name << "/" << plan.deployment << " (" << document.source
              << ", document " << document.index << ")\n";
    std::printf("  %-16s %-8s %-16s %-9s %-16s %s\n", "ROLE", "KIND", "MODE", "SHAPE", "CANDIDATES",
                "FLAGS");
    for (const auto& role : plan.roles) {
        std::string flags;
        for (const auto& flag : role.flags) {
            flags += (flags.empty() ? "" : "; ") + std::string(rules::to_string(flag.target)) +
                     ": " + spelled(flag);
        }
        const std::string shape = std::to_string(role.replicas) + "x" + std::to_string(role.size);
        std::printf("  %-16s %-8s %-16s %-9s %-16s %s\n", role.name.c_str(),
                    std::string(rules::to_string(role.kind)).c_str(),
                    std::string(rules::to_string(role.mode)).c_str(), shape.c_str(),
                    members(role.candidate).c_str(), flags.empty() ? "-" : flags.c_str());
    }
    for (const auto& flag : plan.router_flags) {
        std::cout << "  router: " << spelled(flag) << "  (" << flag.reason << ")\n";
    }
    for (const auto& note : plan.notes) {
        std::cout << "  note: " << note << "\n";
    }
}

}  // namespace

int run_render(const Options& options) {
    auto judging = start_command(options);
    if (!judging) {
        return exit_usage;
    }
    auto read = inputs::read_inputs(options.inputs);
    if (!read) {
        std::cerr << "mdadmit: " << read.error().message << "\n";
        return exit_usage;
    }
    const std::vector<inputs::Document>& documents = read.value();
    rules::InstanceTypes& types = judging->instance_types;
    inputs::collect_instance_types(documents, types);
    json::array plans;
    std::size_t rendered = 0;
    for (const auto& document : documents) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        ++rendered;
        const auto decoded = rules::decode_model_deployment(document.value);
        const auto plan = rules::plan_mutations(decoded.model, judging->engine.data(), &types);
        if (options.output != OutputFormat::json) {
            print_text(plan, document);
            continue;
        }
        json::array roles;
        for (const auto& role : plan.roles) {
            json::array candidates;
            for (std::size_t i = 0; i < role.candidate.size(); ++i) {
                if (role.candidate[i]) {
                    candidates.push_back(i);
                }
            }
            roles.push_back(json::object{{"name", role.name},
                                         {"kind", rules::to_string(role.kind)},
                                         {"mode", rules::to_string(role.mode)},
                                         {"replicas", role.replicas},
                                         {"size", role.size},
                                         {"candidateMembers", std::move(candidates)},
                                         {"flags", flags_json(role.flags)}});
        }
        plans.push_back(json::object{{"namespace", plan.namespace_name},
                                     {"name", plan.deployment},
                                     {"roles", std::move(roles)},
                                     {"routerFlags", flags_json(plan.router_flags)},
                                     {"notes", json::value_from(plan.notes)}});
    }
    if (rendered == 0) {
        std::cerr << "mdadmit: no ModelDeployment found in the inputs\n";
        return exit_usage;
    }
    if (options.output == OutputFormat::json) {
        std::cout << json::serialize(plans) << "\n";
    }
    return exit_admitted;
}

}  // namespace mdadmit::cli
