#pragma once

// The parallel degrees a role declares, read as the engine reads them: shared by the width
// rule (parallelism) and the Elastic EP rules.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mdadmit/rules/arg_stream.hpp"
#include "mdadmit/rules/model.hpp"
#include "mdadmit/rules/rule_data.hpp"

namespace mdadmit::rules {

// A degree written so that the engine would refuse it: where, and what is wrong.
struct DegreeProblem {
    std::string field;                 // "extraArgs[3]", "env[0]": relative to the role
    std::string written;               // the flag or environment variable, as written
    std::optional<std::string> value;  // absent: the flag has no value
    std::int64_t minimum = 1;
};

struct DeclaredParallelism {
    // Effective values by degree name (the table's names, a handful), in the order declared.
    List<std::pair<std::string_view, std::int64_t>> values;
    std::vector<DegreeProblem> problems;  // every malformed occurrence
    bool wired = false;                   // a flag wires ranks over nodes or Pods
    bool narrowed = false;  // a mode or degree narrows data parallelism into the member

    std::int64_t value(std::string_view degree) const;  // 1 when undeclared
    bool declared(std::string_view degree) const;
    void set(std::string_view degree, std::int64_t value);

  private:
    std::size_t position(std::string_view degree) const;  // values.size() when undeclared
};

// Reads the degrees of `table` from a role's argument stream (`args` over `tokens`, named
// `args_field`) and environment. Unique prefixes of the table's long flags resolve to them
// when the engine's parser takes abbreviations. The values are kept in `memory`.
DeclaredParallelism read_parallelism(const ParallelTable& table, const ArgStream& args,
                                     std::string_view args_field, std::span<const EnvVar> env,
                                     const FlagSpelling& spelling, Memory memory);

// One member's width of accelerators, with the degrees that make it up for messages
// ("tensor 2"). Saturates at the int64 maximum.
struct MemberWidth {
    std::int64_t accelerators = 1;
    List<std::pair<std::string_view, std::int64_t>> factors;

    std::string factors_text() const;  // "tensor 2 x data 4"
};
MemberWidth member_width(const ParallelTable& table, const DeclaredParallelism& declared,
                         Memory memory);

}  // namespace mdadmit::rules
