#pragma once

#include <boost/json/fwd.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mdadmit/rules/decode.hpp"
#include "mdadmit/rules/result.hpp"

namespace mdadmit::rules {

// The structural check of a ModelDeployment against its JSON Schema (valijson). The schema
// is the one the CRD in manifests/crd/ is generated from.
class SchemaCheck {
  public:
    static Result<SchemaCheck> create(std::string_view schema_json);
    static SchemaCheck embedded();
    ~SchemaCheck();
    SchemaCheck(SchemaCheck&&) noexcept;
    SchemaCheck& operator=(SchemaCheck&&) noexcept;

    // Every violation with the field path of the deepest value at fault. Thread-safe.
    std::vector<DecodeProblem> check(const boost::json::value& object) const;

  private:
    struct Compiled;
    explicit SchemaCheck(std::unique_ptr<Compiled> compiled);
    std::unique_ptr<Compiled> compiled_;
};

// The schema compiled into the binary (a copy of rules/data/modeldeployment.schema.json).
std::string_view embedded_schema_json();

}  // namespace mdadmit::rules
