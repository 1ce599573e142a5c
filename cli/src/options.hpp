#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mdadmit/inputs/judging.hpp"
#include "mdadmit/rules/engine.hpp"

namespace mdadmit::cli {

// Exit statuses a pipeline can branch on.
inline constexpr int exit_admitted = 0;
inline constexpr int exit_denied = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_internal = 3;

enum class OutputFormat { text, json, junit, sarif };

struct Options {
    std::string command;
    std::vector<std::string> inputs;
    std::vector<std::string> instance_type_files;
    std::optional<std::string> old_file;
    std::optional<std::string> rules_data;
    OutputFormat output = OutputFormat::text;
    bool warnings_as_errors = false;
    bool markdown = false;
    std::optional<bool> full_schema_check;  // --schema-check=full|decoder
    rules::Enforcement enforcement;         // --enforce
    // audit, reading the cluster through kubectl (its current context unless told otherwise)
    bool all_namespaces = false;  // -A, --all-namespaces
    std::string namespace_name;   // -n, --namespace
    std::string context;          // --context
    std::string kubeconfig;       // --kubeconfig
    std::string kubectl = "kubectl";
};

// An Error is a usage message for stderr.
rules::Result<Options> parse_options(const std::vector<std::string>& arguments);

extern const char* const usage;

// What a command judges with, built as the webhook builds it: the rule data from
// --rules-data when given, the structural check of --schema-check (else `full_by_default`),
// --enforce, and the InstanceTypes of --instance-types.
rules::Result<inputs::Judging> make_judging(const Options& options, bool full_by_default = true);

// What every command that reads inputs does first: usage when there are none, and the
// judging setup; nullopt (the problem told on stderr) means exit with exit_usage.
std::optional<inputs::Judging> start_command(const Options& options, bool full_by_default = true);

}  // namespace mdadmit::cli
