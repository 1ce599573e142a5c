#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/result.hpp"

namespace mdadmit::inputs {

// One document of an input file, as JSON whatever the file's syntax.
struct Document {
    boost::json::value value;
    std::string source;     // file name, or "-" for standard input
    std::size_t index = 0;  // 1-based position in a multi-document file
    std::size_t line = 0;   // 1-based line where the document starts (YAML), 0 if unknown
    std::size_t item = 0;   // 1-based position in the document's `items` (a List), else 0
};

// Reads JSON (a text starting with '{' or '[') or multi-document YAML. YAML scalars are
// typed by the YAML 1.2 core schema: quoted scalars are strings, plain ones may be
// null, booleans or numbers. A List (`kind: List` or `ModelDeploymentList`, what
// `kubectl get -o json|yaml` prints) stands for its items, each a document of its own.
// An Error names the source, and the line where YAML gives it.
rules::Result<std::vector<Document>> parse_documents(std::string_view text,
                                                     const std::string& source);
rules::Result<std::vector<Document>> read_documents(const std::string& path);

// Reads every file of `paths`: files, "-", and directories (their *.yaml, *.yml and *.json,
// recursively, in name order).
rules::Result<std::vector<Document>> read_inputs(const std::vector<std::string>& paths);

std::string_view kind_of(const boost::json::value& document);

// Adds the InstanceTypes among `documents`, by name.
void collect_instance_types(const std::vector<Document>& documents, rules::InstanceTypes& out);

}  // namespace mdadmit::inputs
