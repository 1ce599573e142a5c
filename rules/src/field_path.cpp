#include "field_path.hpp"

namespace mdadmit::rules {

std::string FieldPath::text() const {
    std::string out;
    append_to(out);
    return out;
}

void FieldPath::append_to(std::string& out) const {
    if (parent_ == nullptr) {
        return;
    }
    parent_->append_to(out);
    if (is_index_) {
        out += '[';
        out += std::to_string(index_);
        out += ']';
        return;
    }
    if (!out.empty()) {
        out += '.';
    }
    out += key_;
}

}  // namespace mdadmit::rules
