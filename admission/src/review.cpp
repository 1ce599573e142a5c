#include "mdadmit/admission/review.hpp"

#include <algorithm>
#include <boost/json.hpp>

namespace mdadmit::admission {

namespace {

namespace json = boost::json;

constexpr std::size_t max_warning_bytes = 256;

std::string field_of(const rules::Finding& finding) {
    return finding.path.empty() ? "(object)" : finding.path;
}

std::string without_control_characters(std::string_view text) {
    std::string out(text);
    std::replace_if(
        out.begin(), out.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
    return out;
}

// Cuts at most `limit` bytes without splitting a UTF-8 sequence.
std::string truncated(std::string text, std::size_t limit) {
    if (text.size() <= limit) {
        return text;
    }
    std::size_t cut = limit - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut;
    }
    text.resize(cut);
    return text + "...";
}

json::object response_head(const ReviewEnvelope& envelope, bool allowed) {
    return json::object{{"uid", envelope.uid}, {"allowed", allowed}};
}

std::string review(const ReviewEnvelope& envelope, json::object response) {
    return json::serialize(json::object{{"apiVersion", envelope.api_version},
                                        {"kind", "AdmissionReview"},
                                        {"response", std::move(response)}});
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

}  // namespace

std::string patch_review(const ReviewEnvelope& envelope, std::string_view json_patch) {
    json::object response = response_head(envelope, true);
    response["patchType"] = "JSONPatch";
    response["patch"] = base64(json_patch);
    return review(envelope, std::move(response));
}

std::vector<std::string> warning_lines(const rules::Evaluation& evaluation) {
    std::vector<std::string> out;
    for (const auto* finding : evaluation.with_severity(rules::Severity::warn)) {
        std::string line =
            truncated(without_control_characters(finding->rule +
                                                 (finding->enforced ? ": " : " (would deny): ") +
                                                 field_of(*finding) + ": " + finding->message),
                      max_warning_bytes);
        if (std::find(out.begin(), out.end(), line) == out.end()) {
            out.push_back(std::move(line));
        }
    }
    return out;
}

std::string verdict_review(const ReviewEnvelope& envelope, const ObjectIdentity& object,
                           const rules::Evaluation& evaluation) {
    json::object response = response_head(envelope, evaluation.allowed());
    if (!evaluation.allowed()) {
        json::array causes;
        std::string message;
        for (const auto* finding : evaluation.with_severity(rules::Severity::deny)) {
            const std::string text = finding->message + " [" + finding->rule + "]";
            causes.push_back(json::object{
                {"reason", "FieldValueInvalid"}, {"field", field_of(*finding)}, {"message", text}});
            message += (message.empty() ? "" : "; ") + field_of(*finding) + ": " + text;
        }
        response["status"] = json::object{{"metadata", json::object{}},
                                          {"status", "Failure"},
                                          {"code", 422},
                                          {"reason", "Invalid"},
                                          {"message", without_control_characters(message)},
                                          {"details", json::object{{"name", object.name},
                                                                   {"group", object.group},
                                                                   {"kind", object.kind},
                                                                   {"causes", std::move(causes)}}}};
    }
    const auto warnings = warning_lines(evaluation);
    if (!warnings.empty()) {
        response["warnings"] = json::value_from(warnings);
    }
    return review(envelope, std::move(response));
}

std::string allowed_review(const ReviewEnvelope& envelope,
                           const std::vector<std::string>& warnings) {
    json::object response = response_head(envelope, true);
    if (!warnings.empty()) {
        response["warnings"] = json::value_from(warnings);
    }
    return review(envelope, std::move(response));
}

std::string failed_review(const ReviewEnvelope& envelope, int code, std::string_view reason,
                          std::string_view message) {
    json::object response = response_head(envelope, false);
    response["status"] = json::object{{"metadata", json::object{}},
                                      {"status", "Failure"},
                                      {"code", code},
                                      {"reason", reason},
                                      {"message", without_control_characters(message)}};
    return review(envelope, std::move(response));
}

std::string status_body(int code, std::string_view reason, std::string_view message) {
    return json::serialize(json::object{{"apiVersion", "v1"},
                                        {"kind", "Status"},
                                        {"metadata", json::object{}},
                                        {"status", "Failure"},
                                        {"code", code},
                                        {"reason", reason},
                                        {"message", without_control_characters(message)}});
}

}  // namespace mdadmit::admission
