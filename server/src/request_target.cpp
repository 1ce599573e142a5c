#include "request_target.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace mdadmit::server {

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
    if (text.empty() || text.size() > 32) {
        return std::nullopt;
    }
    double total_ms = 0;
    while (!text.empty()) {
        std::size_t digits = 0;
        while (digits < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
            ++digits;
        }
        if (digits == 0) {
            return std::nullopt;
        }
        double number = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
        if (ec != std::errc{} || end != text.data() + digits) {
            return std::nullopt;
        }
        text.remove_prefix(digits);
        std::size_t unit_length = 0;
        while (unit_length < text.size() &&
               std::isalpha(static_cast<unsigned char>(text[unit_length]))) {
            ++unit_length;
        }
        const std::string_view unit = text.substr(0, unit_length);
        text.remove_prefix(unit_length);
        if (unit == "ms") {
            total_ms += number;
        } else if (unit == "s") {
            total_ms += number * 1000;
        } else if (unit == "m") {
            total_ms += number * 60'000;
        } else if (unit == "h") {
            total_ms += number * 3'600'000;
        } else if (unit == "us" || unit == "µs") {
            total_ms += number / 1000;
        } else {
            return std::nullopt;
        }
    }
    if (!std::isfinite(total_ms) || total_ms > 24.0 * 3'600'000) {
        return std::nullopt;
    }
    return std::chrono::milliseconds(static_cast<long long>(total_ms));
}

RequestTarget parse_target(std::string_view target) {
    RequestTarget out;
    const std::size_t question = target.find('?');
    std::string_view path = target.substr(0, question);
    while (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    out.path = std::string(path);
    if (question == std::string_view::npos) {
        return out;
    }
    std::string_view query = target.substr(question + 1);
    while (!query.empty()) {
        const std::size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        if (pair.substr(0, 8) == "timeout=") {
            out.timeout = parse_go_duration(pair.substr(8));
        }
        if (amp == std::string_view::npos) {
            break;
        }
        query.remove_prefix(amp + 1);
    }
    return out;
}

}  // namespace mdadmit::server
