#pragma once

// Writes JSON text straight into a string, a member or an element at a time, with the same
// escaping as Boost.JSON's serializer: an answer costs one string, not a DOM and then its text.

#include <charconv>
#include <string>
#include <string_view>

#include "json_scan.hpp"

namespace mdadmit::admission {

class JsonWriter {
  public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    void reserve(std::size_t bytes) { out_.reserve(out_.size() + bytes); }
    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }
    // The member's name; its value is the next thing written.
    void key(std::string_view name) {
        separate();
        quoted(name);
        out_ += ':';
        first_ = true;
    }
    void string(std::string_view text) {
        separate();
        quoted(text);
    }
    void boolean(bool value) {
        separate();
        out_ += value ? "true" : "false";
    }
    void integer(long long value) {
        separate();
        char digits[24];
        const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
        out_.append(digits, end);
    }
    void empty_object() {
        separate();
        out_ += "{}";
    }

  private:
    void open(char bracket) {
        separate();
        out_ += bracket;
        first_ = true;
    }
    void close(char bracket) {
        out_ += bracket;
        first_ = false;
    }
    void separate() {
        if (!first_) {
            out_ += ',';
        }
        first_ = false;
    }
    void quoted(std::string_view text) {
        static constexpr char hex[] = "0123456789abcdef";
        out_ += '"';
        std::size_t plain = 0;  // start of the run not yet copied
        // Most texts (a uid, a name, a message) need no escape: their printable ASCII is passed
        // sixteen bytes at a time.
        for (std::size_t i = json_scan::plain_prefix_end(text, 0); i < text.size(); ++i) {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            out_.append(text, plain, i - plain);
            plain = i + 1;
            out_ += '\\';
            switch (c) {
                case '"':
                case '\\':
                    out_ += static_cast<char>(c);
                    break;
                case '\b':
                    out_ += 'b';
                    break;
                case '\f':
                    out_ += 'f';
                    break;
                case '\n':
                    out_ += 'n';
                    break;
                case '\r':
                    out_ += 'r';
                    break;
                case '\t':
                    out_ += 't';
                    break;
                default:
                    out_ += "u00";
                    out_ += hex[c >> 4];
                    out_ += hex[c & 15];
            }
        }
        out_.append(text, plain, text.size() - plain);
        out_ += '"';
    }

    std::string& out_;
    bool first_ = true;  // nothing written yet at this level, or a key was just written
};

}  // namespace mdadmit::admission
