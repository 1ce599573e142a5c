#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace mdadmit::inputs {

// A JSON value as block-style YAML, indented by two: maps and lists of objects in block form,
// lists of scalars on one line (`["a", "b"]`), every string double-quoted so that no value
// ("TCP", "1", "on") can change type when read back. Reading the text back gives the value.
std::string yaml_text(const boost::json::value& value);

}  // namespace mdadmit::inputs
