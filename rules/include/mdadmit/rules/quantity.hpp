#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mdadmit::rules {

// A Kubernetes resource quantity (`resource.Quantity`): `1`, `"1"`, `"1500m"`, `"1.5"`,
// `"2k"`, `"1e3"`, `"2Gi"`. The operator declares `resources.accelerator` and
// `resources.interface` as quantities and its defaulting stores them as strings, so a rule
// never reads them as JSON integers.
//
// The value is held exactly, as Kubernetes holds it: sign x digits x 10^exponent x 2^binary,
// with the magnitude rounded up to nano units (10^-9), as `resource.ParseQuantity` does.
class Quantity {
  public:
    // Parses the Kubernetes grammar: an optional sign, digits with an optional fraction, then
    // one suffix: none, n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E and an integer exponent.
    // nullopt for anything else ("two", "1.5.0", "", "1e1.5", "1 k").
    static std::optional<Quantity> parse(std::string_view text);
    static Quantity of(std::int64_t value);

    const std::string& text() const { return text_; }  // as written, for messages
    bool negative() const { return negative_; }
    bool is_zero() const { return digits_.empty(); }
    // Whether the exact value is a whole number ("2", "2000m", "1.0", "1Ki"; not "1500m").
    bool whole() const { return whole_; }
    // The exact value when it is whole and within int64: what rules that need a count of
    // accelerators read, as the operator's `Quantity.AsInt64` does; nullopt otherwise, and
    // such a rule then stays silent.
    std::optional<std::int64_t> whole_count() const { return count_; }

    // Equal values, however written: "1", 1, "1000m" and "1.0" are one quantity.
    bool same_value(const Quantity& other) const { return compare(other) == 0; }
    // -1, 0 or 1 as this value is below, equal to or above `other`, exactly.
    int compare(const Quantity& other) const;
    // The same text and value (same_value compares values only).
    bool operator==(const Quantity&) const = default;

  private:
    Quantity() = default;
    void settle();

    std::string text_;
    bool negative_ = false;
    std::string digits_;  // significant digits: no leading or trailing zeros; "" is zero
    // Power of ten, at least -9 once rounded to nano units. A binary suffix is multiplied
    // into the digits; exponents beyond a million are held at a million.
    std::int64_t exponent_ = 0;
    bool whole_ = true;
    std::optional<std::int64_t> count_;
};

// Both absent, or both present with equal values.
inline bool same_quantity(const std::optional<Quantity>& a, const std::optional<Quantity>& b) {
    return a.has_value() == b.has_value() && (!a || a->same_value(*b));
}

}  // namespace mdadmit::rules
