#pragma once
// The report of `check` and `audit`: every judged ModelDeployment with its findings, as text,
// JSON, JUnit or SARIF, and the exit status a pipeline branches on.
#include <boost/json/fwd.hpp>
#include <string>
#include <vector>

#include "mdadmit/inputs/documents.hpp"
#include "mdadmit/rules/engine.hpp"
#include "options.hpp"

namespace mdadmit::cli {

struct Judged {
    const inputs::Document* document;
    std::string name;  // namespace/name
    rules::Evaluation evaluation;
};

// "namespace/name" of a manifest, "(unnamed)" for a missing name.
std::string object_name(const boost::json::value& document);

// Writes the report in the format `options` asks for to stdout; `tool` names the command in
// JUnit's suite. The exit status: exit_denied when any object is refused (or warned, with
// --warnings-as-errors), else exit_admitted.
int report(const std::vector<Judged>& judged, const rules::Engine& engine, const Options& options,
           const std::string& tool);

}  // namespace mdadmit::cli
