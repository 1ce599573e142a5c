#include "mdadmit/rules/arg_stream.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace mdadmit::rules {

namespace {

// `-5` is a negative value, never a flag.
bool is_flag(std::string_view token) {
    return token.size() > 1 && token.front() == '-' && (token[1] < '0' || token[1] > '9');
}

}  // namespace

bool same_flag_name(std::string_view written, std::string_view flag, bool underscores,
                    bool prefix) {
    if (prefix ? written.size() > flag.size() : written.size() != flag.size()) {
        return false;
    }
    if (differ_at_first_letter(written, flag)) {
        return false;
    }
    const bool long_flag = underscores && written.starts_with("--");
    if (!long_flag || written.find('_', 2) == std::string_view::npos) {
        return written == flag.substr(0, written.size());  // nothing to read differently
    }
    for (std::size_t i = 0; i < written.size(); ++i) {
        const char read = long_flag && i >= 2 && written[i] == '_' ? '-' : written[i];
        if (read != flag[i]) {
            return false;
        }
    }
    return true;
}

ArgStream::ArgStream(std::span<const std::string_view> tokens, bool underscores_are_dashes,
                     std::pmr::memory_resource* memory)
    : flags_(memory) {
    read(tokens, underscores_are_dashes);
}

ArgStream::ArgStream(const std::vector<std::string>& tokens, bool underscores_are_dashes) {
    read(tokens, underscores_are_dashes);
}

template <typename Tokens>
void ArgStream::read(const Tokens& tokens, bool underscores_are_dashes) {
    flags_.reserve(tokens.size());  // one allocation, at most one flag per token
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view token = tokens[i];
        if (token == "--") {
            break;  // what follows is positional, as argparse reads it
        }
        if (!is_flag(token)) {
            continue;
        }
        FlagOccurrence flag;
        flag.flag_index = i;
        const std::size_t equals = token.find('=');
        if (equals != std::string_view::npos) {
            flag.name = token.substr(0, equals);
            flag.value = token.substr(equals + 1);
            flag.value_index = i;
        } else {
            flag.name = token;
            // A following token that is not itself a flag is this flag's value.
            if (i + 1 < tokens.size() && !is_flag(tokens[i + 1])) {
                flag.value = std::string_view(tokens[i + 1]);
                flag.value_index = i + 1;
                ++i;
            }
        }
        flag.underscores_are_dashes = underscores_are_dashes && flag.name.starts_with("--") &&
                                      flag.name.find('_', 2) != std::string_view::npos;
        flags_.push_back(flag);
    }
}

template <typename Names>
const FlagOccurrence* ArgStream::last_named(const Names& names) const {
    for (auto it = flags_.rbegin(); it != flags_.rend(); ++it) {
        for (const std::string_view name : names) {
            if (it->reads_as(name)) {
                return &*it;
            }
        }
    }
    return nullptr;
}

std::optional<std::int64_t> ArgStream::value_integer(const FlagOccurrence* flag) {
    if (flag == nullptr || !flag->value) {
        return std::nullopt;
    }
    return parse_engine_integer(*flag->value);
}

const FlagOccurrence* ArgStream::last(std::initializer_list<std::string_view> names) const {
    return last_named(names);
}

const FlagOccurrence* ArgStream::last_of(const std::vector<std::string>& names) const {
    return last_named(names);
}

std::optional<std::int64_t> ArgStream::integer(
    std::initializer_list<std::string_view> names) const {
    return value_integer(last(names));
}

std::optional<std::int64_t> ArgStream::integer_of(const std::vector<std::string>& names) const {
    return value_integer(last_of(names));
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::optional<std::int64_t> parse_engine_integer(std::string_view text) {
    // Python's int(): surrounding whitespace, one sign, and single underscores between digits.
    const auto space = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    };
    while (!text.empty() && space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && space(text.back())) {
        text.remove_suffix(1);
    }
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || text.front() == '_' || text.back() == '_') {
        return std::nullopt;
    }
    std::uint64_t magnitude = 0;
    char previous = '0';
    for (const char c : text) {
        if (c == '_') {
            if (previous == '_') {
                return std::nullopt;
            }
        } else if (c < '0' || c > '9') {
            return std::nullopt;
        } else if (__builtin_mul_overflow(magnitude, 10u, &magnitude) ||
                   __builtin_add_overflow(magnitude, static_cast<unsigned>(c - '0'), &magnitude)) {
            return std::nullopt;
        }
        previous = c;
    }
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    if (magnitude > limit) {
        return std::nullopt;
    }
    return negative ? static_cast<std::int64_t>(0 - magnitude)
                    : static_cast<std::int64_t>(magnitude);
}

}  // namespace mdadmit::rules
