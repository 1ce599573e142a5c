#include "report.hpp"

#include <boost/json.hpp>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/junit.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace mdadmit::cli {

namespace json = boost::json;

std::string object_name(const json::value& document) {
    const std::string ns = rules::string_at(document, "/metadata/namespace");
    const std::string name = rules::string_at(document, "/metadata/name");
    return (ns.empty() ? "" : ns + "/") + (name.empty() ? "(unnamed)" : name);
}

namespace {

// "file, document 2" or "file, document 1, item 7" (an item of a List).
std::string where(const inputs::Document& document) {
    return document.source + ", document " + std::to_string(document.index) +
           (document.item > 0 ? ", item " + std::to_string(document.item) : "");
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
        std::cout << c.bold << item.name << c.reset << " (" << where(*item.document)
                  << "): " << (allowed ? c.green : c.red) << (allowed ? "admitted" : "denied")
                  << c.reset << "\n";
        for (const auto& finding : item.evaluation.findings) {
            const bool deny = finding.severity == rules::Severity::deny;
            std::cout << "  " << (deny ? c.red : c.yellow) << rules::to_string(finding.severity)
                      << c.reset << "  " << finding.rule
                      << (finding.enforced ? "" : " (would deny)") << "  "
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
                                            {"enforced", f.enforced},
                                            {"path", f.path},
                                            {"message", f.message},
                                            {"hint", f.hint}});
            warnings += f.severity == rules::Severity::warn ? 1 : 0;
        }
        denied += item.evaluation.allowed() ? 0 : 1;
        objects.push_back(json::object{{"source", item.document->source},
                                       {"document", item.document->index},
                                       {"item", item.document->item},
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

void print_junit(const std::vector<Judged>& judged, bool warnings_as_errors,
                 const std::string& suite) {
    std::vector<inputs::JunitCase> cases;
    for (const auto& item : judged) {
        inputs::JunitCase c{item.document->source, item.name, "", ""};
        std::size_t counted = 0;
        for (const auto& f : item.evaluation.findings) {
            c.details += std::string(rules::to_string(f.severity)) + " " + std::string(f.rule) +
                         " " + f.path + ": " + f.message + "\n";
            counted += f.severity == rules::Severity::deny || warnings_as_errors ? 1 : 0;
        }
        if (counted > 0) {
            c.failure = item.evaluation.allowed() ? "admitted with warnings" : "denied";
        }
        cases.push_back(std::move(c));
    }
    std::cout << inputs::junit_report(suite, cases);
}

// SARIF 2.1.0, what code-scanning tools read: one run, the catalogue as the tool's rules,
// one result per finding located by file and line (when the object came from a file) and by
// the object and field.
void print_sarif(const std::vector<Judged>& judged, const rules::Engine& engine) {
    const rules::RuleData& data = engine.data();
    json::array catalogue;
    for (const auto& rule : data.rules) {
        // The level the rule reports at in this run, after --enforce.
        const rules::Action action = engine.action(rule.id);
        catalogue.push_back(
            json::object{{"id", rule.id},
                         {"shortDescription", json::object{{"text", rule.meaning}}},
                         {"defaultConfiguration",
                          json::object{{"level", action == rules::Action::deny   ? "error"
                                                 : action == rules::Action::warn ? "warning"
                                                                                 : "none"}}},
                         {"properties", json::object{{"section", rule.section}}}});
    }
    json::array results;
    for (const auto& item : judged) {
        for (const auto& f : item.evaluation.findings) {
            const std::string field = f.path.empty() ? "(object)" : f.path;
            json::object location{
                {"logicalLocations",
                 json::array{json::object{{"fullyQualifiedName", item.name + "/" + field},
                                          {"kind", "member"}}}}};
            // A location in a file only for a file (not standard input, not kubectl's output).
            std::error_code ec;
            if (std::filesystem::is_regular_file(item.document->source, ec)) {
                json::object physical{
                    {"artifactLocation", json::object{{"uri", item.document->source}}}};
                if (item.document->line > 0) {
                    physical["region"] = json::object{{"startLine", item.document->line}};
                }
                location["physicalLocation"] = std::move(physical);
            }
            json::object result{
                {"ruleId", f.rule},
                {"level", f.severity == rules::Severity::deny ? "error" : "warning"},
                {"message", json::object{{"text", item.name + ": " + field + ": " + f.message +
                                                      (f.enforced ? "" : " (would deny)")}}},
                {"locations", json::array{std::move(location)}},
                {"properties", json::object{{"hint", f.hint}, {"enforced", f.enforced}}}};
            if (const auto* rule = data.rule(f.rule)) {
                result["ruleIndex"] = rule - data.rules.data();
            }
            results.push_back(std::move(result));
        }
    }
    std::cout << json::serialize(json::object{
                     {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                     {"version", "2.1.0"},
                     {"runs", json::array{json::object{
                                  {"tool", json::object{{"driver",
                                                         json::object{
                                                             {"name", "mdadmit"},
                                                             {"rules", std::move(catalogue)},
                                                         }}}},
                                  {"results", std::move(results)}}}}})
              << "\n";
}

}  // namespace

int report(const std::vector<Judged>& judged, const rules::Engine& engine, const Options& options,
           const std::string& tool) {
    switch (options.output) {
        case OutputFormat::text:
            print_text(judged);
            break;
        case OutputFormat::json:
            print_json(judged);
            break;
        case OutputFormat::junit:
            print_junit(judged, options.warnings_as_errors, tool);
            break;
        case OutputFormat::sarif:
            print_sarif(judged, engine);
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
