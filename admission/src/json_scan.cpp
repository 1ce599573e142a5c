#include "json_scan.hpp"

#include <algorithm>
#include <cstdint>

namespace mdadmit::admission::json_scan {

namespace {

// Past this many digits a number without an exponent could overflow a double (1e308).
constexpr std::size_t most_number_digits = 300;

// One past a number at `i`, or npos: JSON's grammar without an exponent, whose value Boost.JSON
// would have to check for overflow.
std::size_t number_end(std::string_view text, std::size_t i) {
    const std::size_t start = i;
    if (at(text, i) == '-') {
        ++i;
    }
    if (at(text, i) == '0') {
        ++i;
    } else if (is_digit(at(text, i))) {
        while (is_digit(at(text, i))) {
            ++i;
        }
    } else {
        return npos;
    }
    if (at(text, i) == '.') {
        ++i;
        if (!is_digit(at(text, i))) {
            return npos;
        }
        while (is_digit(at(text, i))) {
            ++i;
        }
    }
    if (at(text, i) == 'e' || at(text, i) == 'E' || i - start > most_number_digits) {
        return npos;
    }
    return i;
}

std::size_t literal_end(std::string_view text, std::size_t i, std::string_view literal) {
    return text.substr(i, literal.size()) == literal ? i + literal.size() : npos;
}

// One past a scalar at `i`, or npos.
std::size_t scalar_end(std::string_view text, std::size_t i) {
    switch (at(text, i)) {
        case '"':
            return checked_string_end(text, i);
        case 't':
            return literal_end(text, i, "true");
        case 'f':
            return literal_end(text, i, "false");
        case 'n':
            return literal_end(text, i, "null");
        default:
            return number_end(text, i);
    }
}

// Appends the UTF-8 form of `code`, a code point below U+10000 that is no surrogate.
void append_utf8(unsigned code, std::string& out) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xc0 | code >> 6);
        out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
        out += static_cast<char>(0xe0 | code >> 12);
        out += static_cast<char>(0x80 | (code >> 6 & 0x3f));
        out += static_cast<char>(0x80 | (code & 0x3f));
    }
}

// The text of a string's `content` (what lies between its quotes), decoded into `out`. The
// content is one checked_string_end took: its escapes are well formed, and none is half a
// surrogate pair.
std::string_view unescape(std::string_view content, std::string& out) {
    out.clear();
    for (std::size_t i = 0;;) {
        const std::size_t escape = content.find('\\', i);
        out.append(content.substr(i, escape - i));
        if (escape == npos) {
            return out;
        }
        const char letter = content[escape + 1];
        i = escape + 2;
        switch (letter) {
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned code = 0;
                for (; i < escape + 6; ++i) {
                    code = code * 16 + static_cast<unsigned>(hex_value(content[i]));
                }
                append_utf8(code, out);
                break;
            }
            default:  // a quote, a backslash or a slash stands for itself
                out += letter;
                break;
        }
    }
}

}  // namespace

std::size_t checked_value_end(std::string_view text, std::size_t i, std::size_t max_nesting) {
    max_nesting = std::min(max_nesting, OpenContainers::most);
    OpenContainers open;
    bool expect_key = false;
    for (;;) {
        // A value begins at i, or a key of the innermost object.
        if (expect_key) {
            if (at(text, i) != '"') {
                return npos;
            }
            i = skip_space(text, checked_string_end(text, i));
            if (i == npos || at(text, i) != ':') {
                return npos;
            }
            i = skip_space(text, i + 1);
        }
        const char c = at(text, i);
        if (c == '{' || c == '[') {
            if (open.size() == max_nesting) {
                return npos;
            }
            const bool object = c == '{';
            open.open(object);
            i = skip_space(text, i + 1);
            if (at(text, i) != (object ? '}' : ']')) {
                expect_key = object;
                continue;
            }
            open.close();
            ++i;
        } else {
            i = scalar_end(text, i);
            if (i == npos) {
                return npos;
            }
        }
        // A value has ended at i: its container goes on, ends, or there is none.
        for (;;) {
            if (open.size() == 0) {
                return i;
            }
            const bool object = open.innermost_is_object();
            i = skip_space(text, i);
            if (at(text, i) == ',') {
                i = skip_space(text, i + 1);
                expect_key = object;
                break;
            }
            if (at(text, i) != (object ? '}' : ']')) {
                return npos;
            }
            open.close();
            ++i;
        }
    }
}

std::size_t decoded_string_end(std::string_view text, std::size_t content, std::size_t i,
                               std::string_view& out, std::string& unescaped) {
    const std::size_t end = checked_string_rest_end(text, i);
    if (end == npos) {
        return npos;
    }
    const std::string_view checked = text.substr(content, end - 1 - content);
    // The plain prefix has no escape; a string beyond ASCII often has none after it either.
    out = checked.find('\\', i - content) == npos ? checked : unescape(checked, unescaped);
    return end;
}

}  // namespace mdadmit::admission::json_scan
