#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mdadmit::inputs {

// One JUnit test case: passed when `failure` is empty.
struct JunitCase {
    std::string class_name;
    std::string name;
    std::string failure;  // one-line reason
    std::string details;  // the full text of the failure or of the findings
};

// A JUnit XML report (the format CI systems read), one suite.
std::string junit_report(std::string_view suite, const std::vector<JunitCase>& cases);

std::string xml_escape(std::string_view text);

}  // namespace mdadmit::inputs
