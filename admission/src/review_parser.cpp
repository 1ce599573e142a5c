#include "review_parser.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

// basic_parser's member definitions, for the handler below: this is the one translation unit
// that instantiates them.
#include <boost/json/basic_parser_impl.hpp>

#include "builder_events.hpp"
#include "document_tokenizer.hpp"
#include "left_out_values.hpp"

namespace mdadmit::admission {

namespace {

namespace json = boost::json;
using boost::system::error_code;

}  // namespace

ReviewParser::ReviewParser(const json::parse_options& options)
    : ReviewParser(options, nullptr, 0) {}

ReviewParser::ReviewParser(const json::parse_options& options, unsigned char* stack,
                           std::size_t size)
    : max_depth_(options.max_depth), parser_(options, stack, size) {}

void ReviewParser::reset(json::storage_ptr memory) {
    memory_ = std::move(memory);
    parser_.reset();
    parser_.handler().values.reset(memory_);
    parser_.handler().begin_document();
}

ReviewParser::Handler::Step ReviewParser::Handler::after(Step step, std::string_view key) {
    switch (step) {
        case Step::root:
            return key == "request" ? Step::request : Step::none;
        case Step::request:
            if (key == "object" || key == "oldObject") {
                return Step::object;
            }
            if (key == "userInfo") {
                return Step::user_info;
            }
            if (key == "operation") {
                return Step::operation;
            }
            return key == "resource" || key == "requestKind" || key == "requestResource" ||
                           key == "options"
                       ? Step::skipped
                       : Step::none;
        case Step::object:
            return key == "metadata" ? Step::metadata : Step::none;
        case Step::metadata:
            return key == "annotations" || key == "managedFields" ? Step::skipped : Step::none;
        case Step::user_info:
            return key == "uid" || key == "groups" || key == "extra" ? Step::skipped : Step::none;
        case Step::none:
        case Step::skipped:
        case Step::operation:
            break;
    }
    return Step::none;
}

json::value ReviewParser::write(std::string_view body, error_code& ec) {
    // Else the tokenizer would check the diverted object and give it as null, to neither the DOM
    // nor the builder.
    static_assert(ReadsWholeValues<Handler>, "the handler reads the diverted object itself");
    Handler& handler = parser_.handler();
    checked_values_ = 0;
    const auto leaves_out = [&] {
        const bool left = handler.leaves_out_value();
        checked_values_ += left && !handler.object_next ? 1 : 0;  // the object is read, not checked
        return left;
    };
    if (tokenize_document(body, max_depth_, leaves_out, handler, unescaped_)) {
        checked_values_ += handler.object_left_out_values;
        return handler.values.release();
    }
    // Read again by Boost.JSON's tokenizer, which says what is wrong with the document or reads
    // what the tokenizer above leaves to it; the document begins anew, with the object no longer
    // diverted, since the builder has had some of it.
    reset(memory_);
    return write_by_boost(body, ec);
}

json::value ReviewParser::write_by_boost(std::string_view body, error_code& ec) {
    // What the tokenizer reads where a left-out value was: any value is left out alike, and a
    // scalar needs no room in the nesting the tokenizer allows.
    constexpr std::string_view placeholder = "null";
    std::size_t from = 0;
    checked_values_ = 0;
    for (const LeftOutValue& value : find_left_out_values(body, max_depth_)) {
        if (!feed(body.substr(from, value.begin - from), true, ec)) {
            return json::value();
        }
        // The value is replaced only where the parser, having read all before it, leaves it out
        // (the search finds the name by its bytes alone); elsewhere its bytes are read.
        if (parser_.handler().awaits_left_out_value(left_out_value_nesting)) {
            if (!feed(placeholder, true, ec)) {
                return json::value();
            }
            from = value.end;
            ++checked_values_;
        } else {
            from = value.begin;
        }
    }
    if (!feed(body.substr(from), false, ec)) {
        return json::value();
    }
    return parser_.handler().values.release();
}

bool ReviewParser::feed(std::string_view bytes, bool more, error_code& ec) {
    const std::size_t taken = parser_.write_some(more, bytes.data(), bytes.size(), ec);
    if (!ec && taken < bytes.size()) {
        ec = json::error::extra_data;
    }
    return !ec;
}

void ReviewParser::Handler::begin_document() {
    depth = 0;
    path_open = 0;
    next = Step::root;
    skip_depth = 0;
    skipping = false;
    non_finite = false;
    key_size = 0;
    builder = nullptr;
    creating = false;
    diverted = false;
    object_next = false;
    object_left_out_values = 0;
}

// A key given in parts is held back while it may name a step or a skipped member; once it is longer
// than any such name, what was held and the parts that follow go to the value stack.
void ReviewParser::Handler::take_key(std::string_view part) {
    if (skipping) {
        return;
    }
    const bool held = key_size <= longest_key;
    if (held && depth == path_open && key_size + part.size() <= longest_key) {
        std::copy(part.begin(), part.end(), key + key_size);
        key_size += part.size();
        return;
    }
    if (held && key_size > 0) {
        values.push_chars({key, key_size});
    }
    key_size = longest_key + 1;
    values.push_chars(part);
}

bool ReviewParser::Handler::on_key_part(json::string_view s, std::size_t, error_code&) {
    take_key(s);
    return true;
}

bool ReviewParser::Handler::on_key_near_path(json::string_view s, std::size_t, error_code&) {
    const std::size_t held = std::exchange(key_size, 0);
    if (skipping) {
        return true;
    }
    Step leads = Step::none;
    if (depth == path_open) {  // a member of the innermost step
        const Step from = steps[path_open - 1].step;
        std::array<char, longest_key> whole;
        std::optional<std::string_view> name;  // the whole key, unless too long to name a step
        if (held == 0) {
            name = s;
        } else if (held + s.size() <= longest_key) {
            std::copy_n(key, held, whole.begin());
            std::copy(s.begin(), s.end(), whole.begin() + static_cast<std::ptrdiff_t>(held));
            name = std::string_view(whole.data(), held + s.size());
        }
        if (name) {
            leads = after(from, *name);
            if (leads == Step::operation) {
                creating = false;  // until its value says CREATE
            }
            if (leads == Step::object && *name == "object" && divert()) {
                return true;
            }
        }
    }
    if (leads == Step::skipped) {
        skipping = true;
        skip_depth = 0;
        ++steps[path_open - 1].skipped_members;
        return true;
    }
    next = leads;
    if (held > 0 && held <= longest_key) {
        values.push_chars({key, held});
    }
    values.push_key(s);
    return true;
}

bool ReviewParser::Handler::divert() {
    if (builder == nullptr || !creating || diverted) {
        return false;
    }
    diverted = true;
    next = Step::none;
    ++steps[path_open - 1].skipped_members;  // request has no `object` in the DOM
    object_next = true;
    skipping = true;  // left out of the events here, and read whole where it begins
    skip_depth = 0;
    return true;
}

std::size_t ReviewParser::Handler::object_end(std::string_view text, std::size_t i,
                                              std::size_t max_nesting, std::string& unescaped) {
    object_next = false;
    skipping = false;
    BuilderEvents events(*builder);
    const std::size_t end = tokenized_value_end(
        text, i, max_nesting, [&] { return events.leaves_out_value(); }, events, unescaped);
    object_left_out_values = events.left_out_values();
    return end;
}

bool ReviewParser::Handler::begin_container(bool is_object) {
    if (skipping) {
        ++skip_depth;
        return true;
    }
    ++depth;
    // A step nested deeper than the steps array holds is not followed: its members are kept, so
    // the unit test of a step added too deep fails on what it keeps instead of the parser writing
    // past the array.
    if (is_object && next != Step::none && depth == path_open + 1 && path_open < path_length) {
        steps[path_open++] = {next, 0};
    }
    next = Step::none;
    return true;
}

// Whether the container that ends now was part of the document (and not of a skipped value).
bool ReviewParser::Handler::end_container() {
    if (skipping) {
        if (--skip_depth == 0) {
            skipping = false;
        }
        return false;
    }
    if (depth == path_open) {
        --path_open;
    }
    --depth;
    return true;
}

// Pushes a scalar with `push`, unless it is in a skipped value; a scalar that is the whole
// skipped value ends the skip.
template <typename Push>
bool ReviewParser::Handler::scalar(Push push) {
    if (!skipping) {
        next = Step::none;
        push();
    } else if (skip_depth == 0) {
        skipping = false;
    }
    return true;
}

bool ReviewParser::Handler::on_object_begin(error_code&) {
    return begin_container(true);
}

bool ReviewParser::Handler::on_object_end(std::size_t n, error_code&) {
    // A step ends: its skipped members are not on the value stack.
    const std::size_t skipped =
        !skipping && depth == path_open ? steps[path_open - 1].skipped_members : 0;
    if (end_container()) {
        values.push_object(n - skipped);
    }
    return true;
}

bool ReviewParser::Handler::on_array_begin(error_code&) {
    return begin_container(false);
}

bool ReviewParser::Handler::on_array_end(std::size_t n, error_code&) {
    if (end_container()) {
        values.push_array(n);
    }
    return true;
}

bool ReviewParser::Handler::on_string_part(json::string_view s, std::size_t, error_code&) {
    if (next == Step::operation) {
        next = Step::none;  // an operation written in parts is not taken for CREATE
    }
    if (!skipping) {
        values.push_chars(s);
    }
    return true;
}

bool ReviewParser::Handler::on_string(json::string_view s, std::size_t, error_code&) {
    if (next == Step::operation) {
        creating = s == "CREATE";
    }
    return scalar([&] { values.push_string(s); });
}

bool ReviewParser::Handler::on_int64(std::int64_t i, json::string_view, error_code&) {
    return scalar([&] { values.push_int64(i); });
}

bool ReviewParser::Handler::on_uint64(std::uint64_t u, json::string_view, error_code&) {
    return scalar([&] { values.push_uint64(u); });
}

bool ReviewParser::Handler::on_double(double d, json::string_view, error_code& ec) {
    if (!std::isfinite(d)) {
        non_finite = true;
        ec = json::error::exponent_overflow;
        return false;
    }
    return scalar([&] { values.push_double(d); });
}

bool ReviewParser::Handler::on_bool(bool b, error_code&) {
    return scalar([&] { values.push_bool(b); });
}

bool ReviewParser::Handler::on_null(error_code&) {
    return scalar([&] { values.push_null(); });
}

}  // namespace mdadmit::admission
