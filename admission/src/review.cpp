#include "mdadmit/admission/review.hpp"

#include <algorithm>
#include <array>
#include <memory_resource>
#include <unordered_set>
#include <utility>

#include "json_writer.hpp"

namespace mdadmit::admission {

namespace {

constexpr std::size_t max_warning_bytes = 256;
// Room for an answer without findings, so that writing it grows the string once.
constexpr std::size_t typical_review_bytes = 512;

std::string_view field_of(const rules::Finding& finding) {
    return finding.path.empty() ? std::string_view("(object)") : std::string_view(finding.path);
}

bool is_control(unsigned char c) {
    return c < 0x20 || c == 0x7f;
}

std::string without_control_characters(std::string_view text) {
    std::string out(text);
    std::replace_if(out.begin(), out.end(), is_control, ' ');
    return out;
}

// One warning as the apiserver shows it: "rule-id: field: message", control characters as
// spaces, cut to at most max_warning_bytes (ending in "..." without splitting a UTF-8
// sequence). Built on the stack: an admitted review's warnings cost no allocation.
class WarningLine {
  public:
    explicit WarningLine(const rules::Finding& finding) {
        append(finding.rule);
        append(finding.enforced ? ": " : " (would deny): ");
        append(field_of(finding));
        append(": ");
        append(finding.message);
        if (size_ > max_warning_bytes) {
            std::size_t cut = max_warning_bytes - 3;
            while (cut > 0 && (static_cast<unsigned char>(bytes_[cut]) & 0xC0) == 0x80) {
                --cut;
            }
            std::copy_n("...", 3, bytes_.begin() + static_cast<std::ptrdiff_t>(cut));
            size_ = cut + 3;
        }
    }

    std::string_view text() const { return {bytes_.data(), size_}; }

  private:
    // Keeps one byte past the limit, which tells a line that must be cut.
    void append(std::string_view piece) {
        for (const char c : piece) {
            if (size_ == bytes_.size()) {
                return;
            }
            bytes_[size_++] = is_control(static_cast<unsigned char>(c)) ? ' ' : c;
        }
    }

    std::array<char, max_warning_bytes + 1> bytes_;
    std::size_t size_ = 0;
};

// Calls `line` with each distinct warning line of the evaluation's warn findings, in order.
template <typename Line>
void for_each_warning(const rules::Evaluation& evaluation, Line line) {
    // The lines already given, to drop repeats: on the stack for the few warnings a review
    // draws, on the heap beyond them; a set, so that many warnings cost linear time.
    std::array<std::byte, 4096> stack;
    std::pmr::monotonic_buffer_resource memory(stack.data(), stack.size());
    std::pmr::unordered_set<std::string_view> given(&memory);
    for (const auto& finding : evaluation.findings) {
        if (finding.severity != rules::Severity::warn) {
            continue;
        }
        const WarningLine current(finding);
        if (given.contains(current.text())) {
            continue;
        }
        auto* kept = static_cast<char*>(memory.allocate(current.text().size(), 1));
        std::copy(current.text().begin(), current.text().end(), kept);
        given.emplace(kept, current.text().size());
        line(current.text());
    }
}

// An AdmissionReview whose response has the request's uid, `allowed`, and then whatever
// `write_rest` writes into the response object; written into `out`'s memory.
template <typename WriteRest>
std::string review(const ReviewEnvelope& envelope, bool allowed, WriteRest write_rest,
                   std::string out = {}) {
    out.clear();
    JsonWriter json(out);
    json.reserve(typical_review_bytes);
    json.begin_object();
    json.key("apiVersion");
    json.string(envelope.api_version);
    json.key("kind");
    json.string("AdmissionReview");
    json.key("response");
    json.begin_object();
    json.key("uid");
    json.string(envelope.uid);
    json.key("allowed");
    json.boolean(allowed);
    write_rest(json);
    json.end_object();
    json.end_object();
    return out;
}

// `warnings`, when `for_each_line` gives any: it calls its argument with each line.
template <typename ForEachLine>
void write_warnings(ForEachLine for_each_line, JsonWriter& json) {
    bool first = true;
    for_each_line([&](std::string_view line) {
        if (std::exchange(first, false)) {
            json.key("warnings");
            json.begin_array();
        }
        json.string(line);
    });
    if (!first) {
        json.end_array();
    }
}

// A Status's members up to its message; details, when there are any, follow.
void write_failure(int code, std::string_view reason, std::string_view message, JsonWriter& json) {
    json.key("metadata");
    json.empty_object();
    json.key("status");
    json.string("Failure");
    json.key("code");
    json.integer(code);
    json.key("reason");
    json.string(reason);
    json.key("message");
    json.string(without_control_characters(message));
}

std::string base64(std::string_view bytes) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t left = bytes.size() - i;
        const unsigned value = static_cast<unsigned char>(bytes[i]) << 16 |
                               (left > 1 ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0) |
                               (left > 2 ? static_cast<unsigned char>(bytes[i + 2]) : 0);
        out += alphabet[value >> 18 & 63];
        out += alphabet[value >> 12 & 63];
        out += left > 1 ? alphabet[value >> 6 & 63] : '=';
        out += left > 2 ? alphabet[value & 63] : '=';
    }
    return out;
}

// The Status of a denial: every deny finding as a cause, and all of them in the message.
void write_denial(const ObjectIdentity& object, const rules::Evaluation& evaluation,
                  JsonWriter& json) {
    const auto denials = evaluation.with_severity(rules::Severity::deny);
    const auto text_of = [](const rules::Finding& finding) {
        return finding.message + " [" + std::string(finding.rule) + "]";
    };
    std::string message;
    for (const auto* finding : denials) {
        message.append(message.empty() ? "" : "; ")
            .append(field_of(*finding))
            .append(": ")
            .append(text_of(*finding));
    }
    json.key("status");
    json.begin_object();
    write_failure(422, "Invalid", message, json);
    json.key("details");
    json.begin_object();
    json.key("name");
    json.string(object.name);
    json.key("group");
    json.string(object.group);
    json.key("kind");
    json.string(object.kind);
    json.key("causes");
    json.begin_array();
    for (const auto* finding : denials) {
        json.begin_object();
        json.key("reason");
        json.string("FieldValueInvalid");
        json.key("field");
        json.string(field_of(*finding));
        json.key("message");
        json.string(text_of(*finding));
        json.end_object();
    }
    json.end_array();
    json.end_object();
    json.end_object();
}

}  // namespace

std::string patch_review(const ReviewEnvelope& envelope, std::string_view json_patch) {
    return review(envelope, true, [&](JsonWriter& json) {
        json.key("patchType");
        json.string("JSONPatch");
        json.key("patch");
        json.string(base64(json_patch));
    });
}

std::vector<std::string> warning_lines(const rules::Evaluation& evaluation) {
    std::vector<std::string> out;
    for_each_warning(evaluation, [&out](std::string_view line) { out.emplace_back(line); });
    return out;
}

std::string verdict_review(const ReviewEnvelope& envelope, const ObjectIdentity& object,
                           const rules::Evaluation& evaluation, std::string storage) {
    const auto write_rest = [&](JsonWriter& json) {
        if (!evaluation.allowed()) {
            write_denial(object, evaluation, json);
        }
        write_warnings([&](auto line) { for_each_warning(evaluation, line); }, json);
    };
    return review(envelope, evaluation.allowed(), write_rest, std::move(storage));
}

std::string allowed_review(const ReviewEnvelope& envelope, const std::vector<std::string>& warnings,
                           std::string storage) {
    const auto each_given = [&warnings](auto line) {
        for (const auto& warning : warnings) {
            line(warning);
        }
    };
    return review(
        envelope, true, [&](JsonWriter& json) { write_warnings(each_given, json); },
        std::move(storage));
}

std::string failed_review(const ReviewEnvelope& envelope, int code, std::string_view reason,
                          std::string_view message, std::string storage) {
    const auto write_rest = [&](JsonWriter& json) {
        json.key("status");
        json.begin_object();
        write_failure(code, reason, message, json);
        json.end_object();
    };
    return review(envelope, false, write_rest, std::move(storage));
}

std::string status_body(int code, std::string_view reason, std::string_view message) {
    std::string out;
    JsonWriter json(out);
    json.begin_object();
    json.key("apiVersion");
    json.string("v1");
    json.key("kind");
    json.string("Status");
    write_failure(code, reason, message, json);
    json.end_object();
    return out;
}

}  // namespace mdadmit::admission
