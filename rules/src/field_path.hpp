#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mdadmit::rules {

// A field path built on the stack while walking JSON; turned into text only when a
// problem is reported, so the well-formed path costs no allocation.
class FieldPath {
  public:
    FieldPath() = default;
    FieldPath member(std::string_view key) const { return FieldPath(this, key, 0, false); }
    FieldPath element(std::size_t index) const { return FieldPath(this, {}, index, true); }

    std::string text() const;

  private:
    FieldPath(const FieldPath* parent, std::string_view key, std::size_t index, bool is_index)
        : parent_(parent), key_(key), index_(index), is_index_(is_index) {}
    void append_to(std::string& out) const;

    const FieldPath* parent_ = nullptr;
    std::string_view key_;
    std::size_t index_ = 0;
    bool is_index_ = false;
};

}  // namespace mdadmit::rules
