#include "mdadmit/rules/quantity.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

namespace mdadmit::rules {

namespace {

// Longer text is refused, so that no quantity costs more than a few small loops to read;
// a real quantity is a handful of characters.
constexpr std::size_t max_text = 64;
// Kubernetes keeps nano units (10^-9) and rounds anything finer up to them.
constexpr std::int64_t nano_exponent = -9;
// Exponents beyond this make a value no rule can count anyway; held saturated.
constexpr std::int64_t max_exponent = 1'000'000;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

struct Suffix {
    std::string_view text;
    int decimal = 0;
    int binary = 0;
};

constexpr std::array suffixes{
    Suffix{"", 0, 0},    Suffix{"n", -9, 0},  Suffix{"u", -6, 0},  Suffix{"m", -3, 0},
    Suffix{"k", 3, 0},   Suffix{"M", 6, 0},   Suffix{"G", 9, 0},   Suffix{"T", 12, 0},
    Suffix{"P", 15, 0},  Suffix{"E", 18, 0},  Suffix{"Ki", 0, 10}, Suffix{"Mi", 0, 20},
    Suffix{"Gi", 0, 30}, Suffix{"Ti", 0, 40}, Suffix{"Pi", 0, 50}, Suffix{"Ei", 0, 60},
};

// `e3`, `E-2`, `e+10`: a decimal exponent written as a signed integer.
std::optional<std::int64_t> exponent_suffix(std::string_view text) {
    if (text.size() < 2 || (text.front() != 'e' && text.front() != 'E')) {
        return std::nullopt;
    }
    text.remove_prefix(1);
    bool negative = false;
    if (text.front() == '+' || text.front() == '-') {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit)) {
        return std::nullopt;
    }
    std::int64_t value = 0;
    for (const char c : text) {
        value = std::min(max_exponent, value * 10 + (c - '0'));
    }
    return negative ? -value : value;
}

// Adds one to a decimal digit string.
std::string increment(std::string digits) {
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (*it != '9') {
            ++*it;
            return digits;
        }
        *it = '0';
    }
    return "1" + digits;
}

// Doubles a decimal digit string.
std::string twice(const std::string& digits) {
    std::string out(digits.size(), '0');
    int carry = 0;
    for (std::size_t i = digits.size(); i-- > 0;) {
        const int d = (digits[i] - '0') * 2 + carry;
        out[i] = static_cast<char>('0' + d % 10);
        carry = d / 10;
    }
    return carry != 0 ? "1" + out : out;
}

}  // namespace

std::optional<Quantity> Quantity::parse(std::string_view text) {
    if (text.empty() || text.size() > max_text) {
        return std::nullopt;
    }
    Quantity q;
    q.text_ = std::string(text);
    std::string_view rest = text;
    if (rest.front() == '+' || rest.front() == '-') {
        q.negative_ = rest.front() == '-';
        rest.remove_prefix(1);
    }
    const auto number_end = std::find_if_not(rest.begin(), rest.end(), is_digit) - rest.begin();
    std::string digits(rest.substr(0, static_cast<std::size_t>(number_end)));
    rest.remove_prefix(static_cast<std::size_t>(number_end));
    std::size_t fraction = 0;
    if (!rest.empty() && rest.front() == '.') {
        rest.remove_prefix(1);
        const auto fraction_end = std::find_if_not(rest.begin(), rest.end(), is_digit);
        fraction = static_cast<std::size_t>(fraction_end - rest.begin());
        digits += rest.substr(0, fraction);
        rest.remove_prefix(fraction);
    }
    if (digits.empty()) {
        return std::nullopt;  // "", ".", "k": no number at all
    }
    std::int64_t decimal = 0;
    int binary = 0;
    if (const auto* suffix = std::find_if(suffixes.begin(), suffixes.end(),
                                          [&](const Suffix& s) { return s.text == rest; });
        suffix != suffixes.end()) {
        decimal = suffix->decimal;
        binary = suffix->binary;
    } else if (const auto exponent = exponent_suffix(rest)) {
        decimal = *exponent;
    } else {
        return std::nullopt;
    }
    q.exponent_ = decimal - static_cast<std::int64_t>(fraction);
    // A binary suffix multiplies before the value is rounded, as in Kubernetes.
    for (int i = 0; i < binary; ++i) {
        digits = twice(digits);
    }
    q.digits_ = std::move(digits);
    q.settle();
    return q;
}

Quantity Quantity::of(std::int64_t value) {
    // What parse() makes of the value's decimal text (a sign, digits, no fraction or suffix),
    // without reading the text back.
    Quantity q;
    q.text_ = std::to_string(value);
    q.negative_ = value < 0;
    q.digits_.assign(q.text_, q.negative_ ? 1 : 0);
    q.settle();
    return q;
}

void Quantity::settle() {
    const auto first = digits_.find_first_not_of('0');
    digits_.erase(0, first == std::string::npos ? digits_.size() : first);
    while (!digits_.empty() && digits_.back() == '0') {
        digits_.pop_back();
        exponent_ = std::min(max_exponent, exponent_ + 1);
    }
    if (digits_.empty()) {
        negative_ = false;
        exponent_ = 0;
        count_ = 0;
        return;
    }
    if (exponent_ < nano_exponent) {
        // Round the magnitude up to nano units: a request for a sliver gets a sliver.
        const std::int64_t dropped = nano_exponent - exponent_;
        if (dropped >= static_cast<std::int64_t>(digits_.size())) {
            digits_ = "1";
        } else {
            digits_.resize(digits_.size() - static_cast<std::size_t>(dropped));
            digits_ = increment(digits_);  // the dropped digits end in a non-zero one
        }
        exponent_ = nano_exponent;
        while (digits_.back() == '0') {
            digits_.pop_back();
            ++exponent_;
        }
    }
    // The significand ends in a non-zero digit, so the value is whole exactly when no power
    // of ten divides it.
    whole_ = exponent_ >= 0;
    // Up to 19 integer digits can fit an int64; more cannot. Like Kubernetes' AsInt64, a
    // value beyond int64 has no count, whatever its suffix.
    constexpr std::int64_t int64_digits = 19;
    if (!whole_ || static_cast<std::int64_t>(digits_.size()) + exponent_ > int64_digits) {
        return;
    }
    unsigned __int128 magnitude = 0;
    for (const char c : digits_) {
        magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
    }
    for (std::int64_t i = 0; i < exponent_; ++i) {
        magnitude *= 10;
    }
    const unsigned __int128 limit =
        static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()) +
        (negative_ ? 1 : 0);
    if (magnitude <= limit) {
        count_ = negative_ ? static_cast<std::int64_t>(-static_cast<__int128>(magnitude))
                           : static_cast<std::int64_t>(magnitude);
    }
}

int Quantity::compare(const Quantity& other) const {
    const auto sign = [](const Quantity& q) {
        return q.digits_.empty() ? 0 : q.negative_ ? -1 : 1;
    };
    if (sign(*this) != sign(other)) {
        return sign(*this) < sign(other) ? -1 : 1;
    }
    // Same sign: compare magnitudes by the place of the leading digit, then digit by digit
    // (the significands have no trailing zeros, so a prefix is the smaller value).
    const std::int64_t place = static_cast<std::int64_t>(digits_.size()) + exponent_;
    const std::int64_t other_place =
        static_cast<std::int64_t>(other.digits_.size()) + other.exponent_;
    int magnitude = 0;
    if (place != other_place) {
        magnitude = place < other_place ? -1 : 1;
    } else if (digits_ != other.digits_) {
        magnitude = digits_ < other.digits_ ? -1 : 1;
    }
    return magnitude * sign(*this);
}

}  // namespace mdadmit::rules
