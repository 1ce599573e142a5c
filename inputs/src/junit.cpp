#include "mdadmit/inputs/junit.hpp"

namespace mdadmit::inputs {

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                // XML 1.0 allows no control characters but tab, newline and carriage return.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                    out += ' ';
                } else {
                    out += c;
                }
        }
    }
    return out;
}

std::string junit_report(std::string_view suite, const std::vector<JunitCase>& cases) {
    std::size_t failures = 0;
    for (const auto& c : cases) {
        failures += c.failure.empty() ? 0 : 1;
    }
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
    out += "  <testsuite name=\"" + xml_escape(suite) + "\" tests=\"" +
           std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"0\">\n";
    for (const auto& c : cases) {
        out += "    <testcase classname=\"" + xml_escape(c.class_name) + "\" name=\"" +
               xml_escape(c.name) + "\"";
        if (c.failure.empty()) {
            out += c.details.empty() ? "/>\n"
                                     : ">\n      <system-out>" + xml_escape(c.details) +
                                           "</system-out>\n    </testcase>\n";
            continue;
        }
        out += ">\n      <failure message=\"" + xml_escape(c.failure) + "\">" +
               xml_escape(c.details) + "</failure>\n    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

}  // namespace mdadmit::inputs
