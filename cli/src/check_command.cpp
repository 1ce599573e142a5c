// mdadmit check: judge manifests as the webhook would, before they are applied.
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/inputs/junit.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::cli {

namespace {

namespace json = boost::json;

struct Judged {
    const inputs::Document* document;
    std::string name;  // namespace/name
    rules::Evaluation evaluation;
};

std::string object_name(const json::value& document) {
    const std::string ns = rules::string_at(document, "/metadata/namespace");
    const std::string name = rules::string_at(document, "/metadata/name");
    return (ns.empty() ? "" : ns + "/") + (name.empty() ? "(unnamed)" : name);
}

struct Colours {
    const char* red = "";
    const char* yellow = "";
    const char* green = "";
    const char* bold = "";
    const char* reset = "";
};

Colours colours() {
    if (!use_colour()) {
        return {};
    }
    return {"\033[31m", "\033[33m", "\033[32m", "\033[1m", "\033[0m"};
}

void print_text(const std::vector<Judged>& judged) {
    const Colours c = colours();
    for (const auto& item : judged) {
        const bool allowed = item.evaluation.allowed();
        std::cout << c.bold << item.name << c.reset << " (" << item.document->source
                  << ", document " << item.document->index << "): " << (allowed ? c.green : c.red)
                  << (allowed ? "admitted" : "denied") << c.reset << "\n";
        for (const auto& finding : item.evaluation.findings) {
            const bool deny = finding.severity == rules::Severity::deny;
            std::cout << "  " << (deny ? c.red : c.yellow) << rules::to_string(finding.severity)
                      << c.reset << "  " << finding.rule << "  "
                      << (finding.path.empty() ? "(object)" : finding.path) << "\n"
                      << "        " << finding.message << "\n"
                      << "        hint: " << finding.hint << "\n";
        }
    }
}

void print_json(const std::vector<Judged>& judged) {
    json::array objects;
    std::size_t denied = 0;
    std::size_t warnings = 0;
    for (const auto& item : judged) {
        json::array findings;
        for (const auto& f : item.evaluation.findings) {
            findings.push_back(json::object{{"rule", f.rule},
                                            {"severity", rules::to_string(f.severity)},
                                            {"path", f.path},
                                            {"message", f.message},
                                            {"hint", f.hint}});
            warnings += f.severity == rules::Severity::warn ? 1 : 0;
        }
        denied += item.evaluation.allowed() ? 0 : 1;
        objects.push_back(json::object{{"source", item.document->source},
                                       {"document", item.document->index},
                                       {"line", item.document->line},
                                       {"name", item.name},
                                       {"allowed", item.evaluation.allowed()},
                                       {"findings", std::move(findings)}});
    }
    std::cout << json::serialize(json::object{{"objects", std::move(objects)},
                                              {"summary", json::object{{"objects", judged.size()},
                                                                       {"denied", denied},
                                                                       {"warnings", warnings}}}})
              << "\n";
}

void print_junit(const std::vector<Judged>& judged, bool warnings_as_errors) {
    std::vector<inputs::JunitCase> cases;
    for (const auto& item : judged) {
        inputs::JunitCase c{item.document->source, item.name, "", ""};
        std::size_t counted = 0;
        for (const auto& f : item.evaluation.findings) {
            c.details += std::string(rules::to_string(f.severity)) + " " + f.rule + " " + f.path +
                         ": " + f.message + "\n";
            counted += f.severity == rules::Severity::deny || warnings_as_errors ? 1 : 0;
        }
        if (counted > 0) {
            c.failure = item.evaluation.allowed() ? "admitted with warnings" : "denied";
        }
        cases.push_back(std::move(c));
    }
    std::cout << inputs::junit_report("mdadmit check", cases);
}

// The old object for `document`: the one with the same namespace and name, or the only one.
const json::value* old_for(const json::value& document, const std::vector<inputs::Document>& olds) {
    const std::string name = object_name(document);
    for (const auto& old : olds) {
        if (object_name(old.value) == name) {
            return &old.value;
        }
    }
    return olds.size() == 1 ? &olds.front().value : nullptr;
}

}  // namespace

bool use_colour() {
    return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
}

int run_check(const Options& options) {
    auto judging = start_command(options);
    if (!judging) {
        return exit_usage;
    }
    auto documents_read = inputs::read_inputs(options.inputs);
    auto olds_read =
        inputs::read_inputs(options.old_file ? std::vector<std::string>{*options.old_file}
                                             : std::vector<std::string>{});
    for (const auto* read : {&documents_read, &olds_read}) {
        if (!*read) {
            std::cerr << "mdadmit: " << read->error().message << "\n";
            return exit_usage;
        }
    }
    const std::vector<inputs::Document>& documents = documents_read.value();
    std::vector<inputs::Document> old_documents = std::move(olds_read).value();
    rules::InstanceTypes& instance_types = judging->instance_types;
    inputs::collect_instance_types(documents, instance_types);
    std::erase_if(old_documents, [](const inputs::Document& d) {
        return inputs::kind_of(d.value) != "ModelDeployment";
    });

    std::vector<Judged> judged;
    for (const auto& document : documents) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        const json::value* old = old_for(document.value, old_documents);
        judged.push_back({&document, object_name(document.value),
                          judging->engine.evaluate({document.value, old, &instance_types,
                                                    old != nullptr ? rules::Operation::update
                                                                   : rules::Operation::create})});
    }
    if (judged.empty()) {
        std::cerr << "mdadmit: no ModelDeployment found in the inputs\n";
        return exit_usage;
    }
    switch (options.output) {
        case OutputFormat::text:
            print_text(judged);
            break;
        case OutputFormat::json:
            print_json(judged);
            break;
        case OutputFormat::junit:
            print_junit(judged, options.warnings_as_errors);
            break;
    }
    for (const auto& item : judged) {
        if (!item.evaluation.allowed() ||
            (options.warnings_as_errors &&
             !item.evaluation.with_severity(rules::Severity::warn).empty())) {
            return exit_denied;
        }
    }
    return exit_admitted;
}

}  // namespace mdadmit::cli
