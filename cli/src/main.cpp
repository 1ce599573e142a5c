// mdadmit: judges ModelDeployment manifests offline with the same rule engine as the webhook.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/inputs/rule_catalog.hpp"
#include "mdadmit/rules/engine.hpp"

namespace {

using namespace mdadmit;

// Exit codes a CI pipeline can branch on.
constexpr int exit_admitted = 0;
constexpr int exit_denied = 1;
constexpr int exit_usage = 2;
constexpr int exit_internal = 3;

constexpr const char* usage = R"(usage:
  mdadmit check [--instance-types FILE] [--rules-data FILE] FILE|- ...
      Judge every ModelDeployment in the files (YAML, multi-document, or JSON).
      InstanceType documents among the inputs supply the accelerator platform.
  mdadmit rules [--markdown]
      List every rule with its id, severity and meaning.

exit status: 0 admitted, 1 denied, 2 usage or input error, 3 internal error
)";

struct Options {
    std::string command;
    std::vector<std::string> files;
    std::vector<std::string> instance_type_files;
    std::optional<std::string> rules_data;
    bool markdown = false;
};

std::optional<Options> parse_arguments(int argc, char** argv) {
    if (argc < 2) {
        return std::nullopt;
    }
    Options options;
    options.command = argv[1];
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--instance-types" || arg == "--rules-data") && i + 1 < argc) {
            (arg == "--instance-types" ? options.instance_type_files.emplace_back(argv[++i])
                                       : options.rules_data.emplace(argv[++i]));
        } else if (arg == "--markdown") {
            options.markdown = true;
        } else if (arg.size() > 1 && arg.front() == '-') {
            std::cerr << "mdadmit: unknown option " << arg << "\n";
            return std::nullopt;
        } else {
            options.files.push_back(arg);
        }
    }
    return options;
}

std::optional<rules::Engine> make_engine(const Options& options) {
    rules::RuleData data = rules::embedded_rule_data();
    if (options.rules_data) {
        auto loaded = rules::load_rule_data_file(*options.rules_data);
        if (!loaded) {
            std::cerr << "mdadmit: " << loaded.error().message << "\n";
            return std::nullopt;
        }
        data = std::move(loaded).value();
    }
    auto engine = rules::Engine::create(std::move(data));
    if (!engine) {
        std::cerr << "mdadmit: " << engine.error().message << "\n";
        return std::nullopt;
    }
    return std::move(engine).value();
}

std::string object_name(const boost::json::value& document) {
    boost::system::error_code ec;
    const auto text = [&](const char* pointer) {
        const auto* value = document.find_pointer(pointer, ec);
        return value != nullptr && value->is_string() ? std::string(value->get_string())
                                                      : std::string();
    };
    const std::string ns = text("/metadata/namespace");
    const std::string name = text("/metadata/name");
    return (ns.empty() ? "" : ns + "/") + (name.empty() ? "(unnamed)" : name);
}

void print_evaluation(const inputs::Document& document, const rules::Evaluation& evaluation) {
    std::cout << object_name(document.value) << " (" << document.source << ", document "
              << document.index << "): " << (evaluation.allowed() ? "admitted" : "denied") << "\n";
    for (const auto& finding : evaluation.findings) {
        std::cout << "  " << rules::to_string(finding.severity) << "  " << finding.rule << "  "
                  << (finding.path.empty() ? "(object)" : finding.path) << "\n"
                  << "        " << finding.message << "\n"
                  << "        hint: " << finding.hint << "\n";
    }
}

int run_check(const Options& options) {
    if (options.files.empty()) {
        std::cerr << usage;
        return exit_usage;
    }
    auto engine = make_engine(options);
    if (!engine) {
        return exit_usage;
    }
    std::vector<inputs::Document> documents;
    rules::InstanceTypes instance_types;
    for (const auto& path : options.instance_type_files) {
        auto read = inputs::read_documents(path);
        if (!read) {
            std::cerr << "mdadmit: " << read.error().message << "\n";
            return exit_usage;
        }
        inputs::collect_instance_types(read.value(), instance_types);
    }
    for (const auto& path : options.files) {
        auto read = inputs::read_documents(path);
        if (!read) {
            std::cerr << "mdadmit: " << read.error().message << "\n";
            return exit_usage;
        }
        for (auto& document : read.value()) {
            documents.push_back(std::move(document));
        }
    }
    inputs::collect_instance_types(documents, instance_types);
    int status = exit_admitted;
    std::size_t judged = 0;
    for (const auto& document : documents) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        ++judged;
        const auto evaluation = engine->evaluate({document.value, nullptr, &instance_types});
        print_evaluation(document, evaluation);
        if (!evaluation.allowed()) {
            status = exit_denied;
        }
    }
    if (judged == 0) {
        std::cerr << "mdadmit: no ModelDeployment found in the inputs\n";
        return exit_usage;
    }
    return status;
}

int run_rules(const Options& options) {
    auto engine = make_engine(options);
    if (!engine) {
        return exit_usage;
    }
    if (options.markdown) {
        std::cout << inputs::rule_table_markdown(engine->data());
        return exit_admitted;
    }
    for (const auto& rule : engine->data().rules) {
        std::printf("%-24s %-5s %s\n", rule.id.c_str(),
                    std::string(rules::to_string(rule.severity)).c_str(), rule.meaning.c_str());
    }
    return exit_admitted;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const auto options = parse_arguments(argc, argv);
        if (!options) {
            std::cerr << usage;
            return exit_usage;
        }
        if (options->command == "check") {
            return run_check(*options);
        }
        if (options->command == "rules") {
            return run_rules(*options);
        }
        if (options->command == "--help" || options->command == "help") {
            std::cout << usage;
            return exit_admitted;
        }
        std::cerr << "mdadmit: unknown command " << options->command << "\n" << usage;
        return exit_usage;
    } catch (const std::exception& e) {
        std::cerr << "mdadmit: internal error: " << e.what() << "\n";
        return exit_internal;
    }
}
