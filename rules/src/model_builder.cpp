#include "mdadmit/rules/model_builder.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "mdadmit/rules/limits.hpp"

namespace mdadmit::rules {

using namespace std::string_view_literals;

ModelBuilder::ModelBuilder(Memory memory, std::string_view source)
    : memory_(memory), source_(source), model_(memory), volume_keys_(memory) {}

void ModelBuilder::begin_object() {
    Value v;
    v.kind = Kind::object;
    value(v);
}

void ModelBuilder::begin_array() {
    Value v;
    v.kind = Kind::array;
    value(v);
}

void ModelBuilder::end_object() {
    close();
}

void ModelBuilder::end_array() {
    close();
}

std::optional<std::size_t> ModelBuilder::next_index(Open& list, std::size_t limit) {
    const std::size_t index = list.elements++;
    if (index >= limit) {
        give_up();  // the decoder reads a bounded prefix; a DOM knows where it ends
        return std::nullopt;
    }
    return index;
}

void ModelBuilder::string(std::string_view text) {
    // Most strings of a large object are entries of a list of arguments.
    if (strings_ != nullptr && ignored_ == 0 && !gave_up_) {
        if (next_index(frames_[open_ - 1], limits::max_list_entries_read)) {
            strings_->push_back(keep(text));
        }
        return;
    }
    Value v;
    v.kind = Kind::string;
    v.text = text;
    value(v);
}

void ModelBuilder::integer(std::int64_t value_read) {
    Value v;
    v.kind = Kind::integer;
    v.integer = value_read;
    value(v);
}

void ModelBuilder::unsigned_integer(std::uint64_t value_read) {
    if (value_read <= static_cast<std::uint64_t>(INT64_MAX)) {
        integer(static_cast<std::int64_t>(value_read));
        return;
    }
    Value v;
    v.kind = Kind::integer;
    v.big = value_read;
    value(v);
}

void ModelBuilder::number(double) {
    Value v;
    v.kind = Kind::number;
    value(v);
}

void ModelBuilder::boolean(bool value_read) {
    Value v;
    v.kind = Kind::boolean;
    v.boolean = value_read;
    value(v);
}

void ModelBuilder::null() {
    value(Value{});
}

void ModelBuilder::value(const Value& v) {
    if (gave_up_) {
        return;
    }
    const bool container = v.kind == Kind::object || v.kind == Kind::array;
    if (ignored_ > 0) {
        ignored_ += container ? 1 : 0;
        return;
    }
    if (!started_) {
        started_ = true;
        if (v.kind != Kind::object) {
            give_up();  // the decoder reports an object that is none
            return;
        }
        open(Frame::root);
        return;
    }
    if (ended_) {
        give_up();
        return;
    }
    const std::size_t before = open_;
    Open& top = frames_[open_ - 1];
    if (is_list(top.frame)) {
        element(top, v);
    } else {
        member(top.frame, std::exchange(field_, -1), v);
    }
    if (container && open_ == before && !gave_up_) {
        ignored_ = 1;  // a value nothing reads: its insides are passed over
    }
}

void ModelBuilder::close() {
    if (gave_up_) {
        return;
    }
    if (ignored_ > 0) {
        --ignored_;
        return;
    }
    if (open_ == 0) {
        give_up();
        return;
    }
    --open_;
    field_ = -1;
    ended_ = open_ == 0;
    strings_ = ended_ ? nullptr : strings_of(frames_[open_ - 1].frame);
}

bool ModelBuilder::is_list(Frame frame) {
    switch (frame) {
        case Frame::router_args:
        case Frame::roles:
        case Frame::ports:
        case Frame::command:
        case Frame::role_args:
        case Frame::env:
        case Frame::volumes:
            return true;
        default:
            return false;
    }
}

void ModelBuilder::open(Frame frame) {
    frames_[open_++] = {frame, 0, 0};
    strings_ = strings_of(frame);
}

List<std::string_view>* ModelBuilder::strings_of(Frame frame) {
    switch (frame) {
        case Frame::router_args:
            return &model_.router->extra_args;
        case Frame::command:
            return &*model_.roles.back().command;
        case Frame::role_args:
            return &model_.roles.back().extra_args;
        default:
            return nullptr;
    }
}

bool ModelBuilder::is(const Value& v, Kind kind) {
    if (v.kind == kind) {
        return true;
    }
    if (v.kind != Kind::null) {
        give_up();  // the decoder reports a value of the wrong type
    }
    return false;
}

bool ModelBuilder::opens(const Value& v, Kind kind, Frame frame) {
    if (!is(v, kind)) {
        return false;
    }
    open(frame);
    return true;
}

void ModelBuilder::element(Open& list, const Value& v) {
    const std::optional<std::size_t> next = next_index(
        list, list.frame == Frame::roles ? limits::max_roles_read : limits::max_list_entries_read);
    if (!next) {
        return;
    }
    const std::size_t index = *next;
    switch (list.frame) {
        case Frame::roles:
            // A null role is passed over, as the decoder does; its index is still counted.
            if (opens(v, Kind::object, Frame::role)) {
                model_.roles.emplace_back(memory_).index = index;
            }
            return;
        case Frame::ports:
            // A null entry is an entry of defaults, so indices stay aligned with field paths.
            if (v.kind == Kind::null || opens(v, Kind::object, Frame::port)) {
                model_.roles.back().ports.emplace_back();
            }
            return;
        case Frame::env:
            if (v.kind == Kind::null || opens(v, Kind::object, Frame::env_var)) {
                model_.roles.back().env.emplace_back();
            }
            return;
        case Frame::volumes:
            if (v.kind == Kind::null || opens(v, Kind::object, Frame::volume)) {
                model_.roles.back().additional_volumes.emplace_back(memory_).is_object =
                    v.kind == Kind::object;
                volume_keys_.clear();
            }
            return;
        default:
            string_element(v);
            return;
    }
}

void ModelBuilder::string_element(const Value& v) {
    std::optional<std::string_view> text;
    if (read_string(v, text)) {
        strings_->push_back(text.value_or(""sv));  // "" for null, which is never a flag
    }
}

std::string_view ModelBuilder::keep(std::string_view text) {
    if (text.empty()) {
        return {};
    }
    // A text of the source lives as long as the model: kept as a view, not copied.
    const auto begin = reinterpret_cast<std::uintptr_t>(text.data());
    const auto source = reinterpret_cast<std::uintptr_t>(source_.data());
    if (begin >= source && begin - source <= source_.size() &&
        text.size() <= source_.size() - (begin - source)) {
        return text;
    }
    auto* copy = static_cast<char*>(memory_->allocate(text.size(), 1));
    std::memcpy(copy, text.data(), text.size());
    return {copy, text.size()};
}

bool ModelBuilder::read_string(const Value& v, std::optional<std::string_view>& out) {
    if (is(v, Kind::string)) {
        out = keep(v.text);
    }
    return !gave_up_;
}

bool ModelBuilder::read_text(const Value& v, std::string_view& out) {
    std::optional<std::string_view> text;
    if (!read_string(v, text)) {
        return false;
    }
    out = text.value_or(""sv);
    return true;
}

bool ModelBuilder::read_integer(const Value& v, std::optional<std::int64_t>& out) {
    if (is(v, Kind::integer)) {
        if (v.big) {
            give_up();  // beyond int64: the decoder reports it
        } else {
            out = v.integer;
        }
    }
    return !gave_up_;
}

// An integer, or a string in Kubernetes' quantity grammar.
bool ModelBuilder::read_quantity(const Value& v, std::optional<Quantity>& out) {
    if (v.kind == Kind::integer) {
        out = v.big ? Quantity::parse(std::to_string(*v.big)) : Quantity::of(v.integer);
    } else if (is(v, Kind::string)) {
        out = Quantity::parse(v.text);
        if (!out) {
            give_up();  // the decoder reports a string that is no quantity
        }
    }
    return !gave_up_;
}

bool ModelBuilder::read_boolean(const Value& v, bool& out) {
    if (is(v, Kind::boolean)) {
        out = v.boolean;
    }
    return !gave_up_;
}

}  // namespace mdadmit::rules
