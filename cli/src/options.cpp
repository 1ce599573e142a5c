#include "options.hpp"

#include <iostream>

namespace mdadmit::cli {

const char* const usage = R"(usage:
  mdadmit check [options] FILE|DIR|- ...   judge every ModelDeployment in the inputs
                              (-f FILE too; a List such as `kubectl get -o yaml` prints
                              counts as its items)
      --instance-types FILE   InstanceType manifests giving roles their platform (repeatable);
                              InstanceType documents among the inputs count too
      --old FILE              the object before the change: judge as an UPDATE
      --output text|json|junit|sarif
      --warnings-as-errors    exit 1 on warnings too
  mdadmit audit [options] [FILE|-]...
                              judge ModelDeployments already stored, each as an UPDATE
                              against itself (as the webhook would judge its next change);
                              the same report and options as check (with the webhook's
                              default --schema-check=decoder). Without inputs it runs
                              `kubectl get modeldeployments -o json` in kubectl's current
                              context:
      -A, --all-namespaces    every namespace (else the context's, or -n)
      -n, --namespace NS
      --context NAME, --kubeconfig FILE
                              passed to kubectl
      --kubectl PATH          the kubectl to run (default: kubectl on PATH)
  mdadmit review [--instance-types FILE] FILE|-
                              AdmissionReview in, the webhook's exact AdmissionReview out
                              (with the webhook's default --schema-check=decoder)
  mdadmit test [--output text|junit] DIR|FILE ...
                              run a suite of cases (docs/harness.md)
  mdadmit render [--instance-types FILE] [--output text|json] FILE|DIR|- ...
                              the mutation plan: candidate members and operator-owned flags
  mdadmit rules [--markdown]   every rule with its id, severity, action (after --enforce)
                              and meaning
common options:
      --rules-data FILE       rule data replacing the built-in rules.json
      --schema-check full|decoder
                              structural check: full JSON Schema (check, test) or the
                              decoder's type checks only (review, like the webhook)
      --enforce RULE=ACTION[,...]
                              staged enforcement, as the webhook's setting of that name:
                              deny, warn or off per rule, *=ACTION for every rule (a rule's
                              own entry wins); repeatable

exit status: 0 admitted (or every case passed), 1 denied (or a case failed),
             2 usage or input error, 3 internal error
)";

namespace {

std::optional<OutputFormat> output_format(const std::string& name) {
    for (const auto& [known, format] :
         {std::pair{"text", OutputFormat::text}, std::pair{"json", OutputFormat::json},
          std::pair{"junit", OutputFormat::junit}, std::pair{"sarif", OutputFormat::sarif}}) {
        if (name == known) {
            return format;
        }
    }
    return std::nullopt;
}

}  // namespace

rules::Result<Options> parse_options(const std::vector<std::string>& arguments) {
    if (arguments.empty()) {
        return rules::Error{usage};
    }
    Options options;
    options.command = arguments[0];
    for (std::size_t i = 1; i < arguments.size(); ++i) {
        std::string argument = arguments[i];
        std::optional<std::string> value;
        if (const auto equals = argument.find('=');
            argument.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = argument.substr(equals + 1);
            argument.resize(equals);
        }
        const auto take_value = [&]() -> std::optional<std::string> {
            if (value) {
                return value;
            }
            if (i + 1 < arguments.size()) {
                return arguments[++i];
            }
            return std::nullopt;
        };
        if (argument == "-A" || argument == "--all-namespaces") {
            if (value && *value != "true") {
                return rules::Error{argument + " takes no value"};
            }
            options.all_namespaces = true;
            continue;
        }
        if (argument == "--instance-types" || argument == "--old" || argument == "--rules-data" ||
            argument == "--output" || argument == "--schema-check" || argument == "--enforce" ||
            argument == "-n" || argument == "--namespace" || argument == "--context" ||
            argument == "--kubeconfig" || argument == "--kubectl" || argument == "-f" ||
            argument == "--filename") {
            const auto given = take_value();
            if (!given) {
                return rules::Error{argument + " needs a value"};
            }
            if (argument == "-f" || argument == "--filename") {
                options.inputs.push_back(*given);
            } else if (argument == "-n" || argument == "--namespace") {
                options.namespace_name = *given;
            } else if (argument == "--context") {
                options.context = *given;
            } else if (argument == "--kubeconfig") {
                options.kubeconfig = *given;
            } else if (argument == "--kubectl") {
                options.kubectl = *given;
            } else if (argument == "--instance-types") {
                options.instance_type_files.push_back(*given);
            } else if (argument == "--old") {
                options.old_file = *given;
            } else if (argument == "--rules-data") {
                options.rules_data = *given;
            } else if (argument == "--enforce") {
                auto parsed = rules::parse_enforcement(*given, std::move(options.enforcement));
                if (!parsed) {
                    return rules::Error{"--enforce: " + parsed.error().message};
                }
                options.enforcement = std::move(parsed).value();
            } else if (argument == "--schema-check") {
                if (*given != "full" && *given != "decoder") {
                    return rules::Error{"--schema-check: expected full or decoder, got \"" +
                                        *given + "\""};
                }
                options.full_schema_check = *given == "full";
            } else if (const auto format = output_format(*given)) {
                options.output = *format;
            } else {
                return rules::Error{"--output: expected text, json, junit or sarif, got \"" +
                                    *given + "\""};
            }
        } else if (argument == "--warnings-as-errors" && !value) {
            options.warnings_as_errors = true;
        } else if (argument == "--markdown" && !value) {
            options.markdown = true;
        } else if (argument.size() > 1 && argument.front() == '-') {
            return rules::Error{"unknown option " + argument};
        } else {
            options.inputs.push_back(arguments[i]);
        }
    }
    if (options.output == OutputFormat::sarif && options.command != "check" &&
        options.command != "audit") {
        return rules::Error{"--output sarif is a report of check and audit"};
    }
    if (options.command != "audit" &&
        (options.all_namespaces || !options.namespace_name.empty() || !options.context.empty() ||
         !options.kubeconfig.empty() || options.kubectl != "kubectl")) {
        return rules::Error{"-A, -n, --context, --kubeconfig and --kubectl are options of audit"};
    }
    return options;
}

rules::Result<inputs::Judging> make_judging(const Options& options, bool full_by_default) {
    inputs::JudgingOptions judging;
    judging.rules_data_file = options.rules_data.value_or("");
    judging.structure_check = options.full_schema_check.value_or(full_by_default)
                                  ? rules::StructureCheck::full
                                  : rules::StructureCheck::decoder_only;
    judging.enforcement = options.enforcement;
    judging.instance_type_files = options.instance_type_files;
    return inputs::load_judging(judging);
}

std::optional<inputs::Judging> start_command(const Options& options, bool full_by_default) {
    if (options.inputs.empty()) {
        std::cerr << usage;
        return std::nullopt;
    }
    auto judging = make_judging(options, full_by_default);
    if (!judging) {
        std::cerr << "mdadmit: " << judging.error().message << "\n";
        return std::nullopt;
    }
    return std::move(judging).value();
}

}  // namespace mdadmit::cli
