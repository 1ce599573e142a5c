#include "options.hpp"

#include <iostream>

namespace mdadmit::cli {

const char* const usage = R"(usage:
  mdadmit check [options] FILE|DIR|- ...   judge every ModelDeployment in the inputs
      --instance-types FILE   InstanceType manifests giving roles their platform (repeatable);
                              InstanceType documents among the inputs count too
      --old FILE              the object before the change: judge as an UPDATE
      --output text|json|junit
      --warnings-as-errors    exit 1 on warnings too
  mdadmit review [--instance-types FILE] FILE|-
                              AdmissionReview in, the webhook's exact AdmissionReview out
                              (with the webhook's default --schema-check=decoder)
  mdadmit test [--output text|junit] DIR|FILE ...
                              run a suite of cases (docs/harness.md)
  mdadmit render [--instance-types FILE] [--output text|json] FILE|DIR|- ...
                              the mutation plan: candidate members and operator-owned flags
  mdadmit rules [--markdown]   every rule with its id, severity and meaning
common options:
      --rules-data FILE       rule data replacing the built-in rules.json
      --schema-check full|decoder
                              structural check: full JSON Schema (check, test) or the
                              decoder's type checks only (review, like the webhook)
      --encode-platform-unknown warn|deny
                              the severity of encode-platform-unknown, as the webhook's
                              setting of that name

exit status: 0 admitted (or every case passed), 1 denied (or a case failed),
             2 usage or input error, 3 internal error
)";

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
        if (argument == "--instance-types" || argument == "--old" || argument == "--rules-data" ||
            argument == "--output" || argument == "--schema-check" ||
            argument == "--encode-platform-unknown") {
            const auto given = take_value();
            if (!given) {
                return rules::Error{argument + " needs a value"};
            }
            if (argument == "--instance-types") {
                options.instance_type_files.push_back(*given);
            } else if (argument == "--old") {
                options.old_file = *given;
            } else if (argument == "--rules-data") {
                options.rules_data = *given;
            } else if (argument == "--encode-platform-unknown") {
                if (*given != "warn" && *given != "deny") {
                    return rules::Error{"--encode-platform-unknown: expected warn or deny, got \"" +
                                        *given + "\""};
                }
                options.encode_platform_unknown =
                    *given == "deny" ? rules::Severity::deny : rules::Severity::warn;
            } else if (argument == "--schema-check") {
                if (*given != "full" && *given != "decoder") {
                    return rules::Error{"--schema-check: expected full or decoder, got \"" +
                                        *given + "\""};
                }
                options.full_schema_check = *given == "full";
            } else if (*given == "text" || *given == "json" || *given == "junit") {
                options.output = *given == "text"   ? OutputFormat::text
                                 : *given == "json" ? OutputFormat::json
                                                    : OutputFormat::junit;
            } else {
                return rules::Error{"--output: expected text, json or junit, got \"" + *given +
                                    "\""};
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
    return options;
}

rules::Result<inputs::Judging> make_judging(const Options& options, bool full_by_default) {
    inputs::JudgingOptions judging;
    judging.rules_data_file = options.rules_data.value_or("");
    judging.structure_check = options.full_schema_check.value_or(full_by_default)
                                  ? rules::StructureCheck::full
                                  : rules::StructureCheck::decoder_only;
    judging.encode_platform_unknown = options.encode_platform_unknown;
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
