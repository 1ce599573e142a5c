#pragma once

#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "mdadmit/rules/model_builder.hpp"

namespace mdadmit::admission {

// The review tokenizer's calls for a CREATE's `request.object`, given straight to a ModelBuilder
// (tokenized_value_end's handler for that one value): the review parser's handler, with its
// steps, skips and keys given in parts, stays out of the way of the object's events, which are
// most of a review's. A member whose value the builder does not read (an annotation, a member
// the model has no field for) is left out: checked without a call, as the review's own left-out
// values are.
class BuilderEvents {
  public:
    explicit BuilderEvents(rules::ModelBuilder& builder) : builder_(builder) {}

    // Whether the value about to begin is one left out; asked once per value, where it begins.
    bool leaves_out_value() {
        left_out_values_ += passes_over_ ? 1 : 0;
        return passes_over_;
    }
    std::size_t left_out_values() const { return left_out_values_; }

    bool on_key(std::string_view text, std::size_t, boost::system::error_code&) {
        builder_.key(text);
        passes_over_ = !builder_.reads_value();
        return true;
    }
    bool on_object_begin(boost::system::error_code&) {
        builder_.begin_object();
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&) {
        builder_.end_object();
        return true;
    }
    bool on_array_begin(boost::system::error_code&) {
        builder_.begin_array();
        return true;
    }
    bool on_array_end(std::size_t, boost::system::error_code&) {
        builder_.end_array();
        return true;
    }
    bool on_string(std::string_view text, std::size_t, boost::system::error_code&) {
        builder_.string(text);
        return true;
    }
    bool on_int64(std::int64_t value, std::string_view, boost::system::error_code&) {
        builder_.integer(value);
        return true;
    }
    bool on_bool(bool value, boost::system::error_code&) {
        builder_.boolean(value);
        return true;
    }
    // Also the call for a value left out, which the builder does not see.
    bool on_null(boost::system::error_code&) {
        if (!std::exchange(passes_over_, false)) {
            builder_.null();
        }
        return true;
    }

  private:
    rules::ModelBuilder& builder_;
    // The builder does not read the value of the key just given: it is left out, until the
    // `null` the tokenizer gives in its place.
    bool passes_over_ = false;
    std::size_t left_out_values_ = 0;
};

}  // namespace mdadmit::admission
