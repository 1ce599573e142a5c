#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/result.hpp"

namespace mdadmit::inputs {

// One document of a YAML stream as JSON, with where it stands in the stream.
struct YamlDocument {
    boost::json::value value;
    std::size_t index = 0;  // 1-based, counting empty documents too
    std::size_t line = 0;   // 1-based line of the document's root node
};

// Reads a multi-document YAML stream with libyaml (fuzzed upstream: it returns an error on
// input it cannot read, rather than looping). Scalars are typed by the YAML 1.2 core schema;
// empty documents are left out. An Error reads "SOURCE:LINE:COLUMN: not valid YAML or JSON:
// problem". Nesting deeper than rules::limits::max_json_depth, and aliases that would copy
// more values than the stream itself holds, are errors rather than work without bound.
rules::Result<std::vector<YamlDocument>> read_yaml_stream(std::string_view text,
                                                          const std::string& source);

}  // namespace mdadmit::inputs
