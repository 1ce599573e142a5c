#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mdadmit::rules {

// Whether `written` can be neither `flag` nor its start however it is read, told by the third
// character alone (a long flag's first letter): rules look flags up in lists of dozens, and
// most pairs differ there. A `_` there may read as `-`, and a `.` may end the name.
inline bool differ_at_first_letter(std::string_view written, std::string_view flag) {
    return written.size() > 2 && flag.size() > 2 && written[2] != flag[2] && written[2] != '_' &&
           written[2] != '.';
}

// Whether `written` is `flag` once a long flag's `_` is read as `-` (positions past the
// leading `--`), when `underscores` is set; `prefix` accepts `written` as the start of `flag`.
bool same_flag_name(std::string_view written, std::string_view flag, bool underscores,
                    bool prefix = false);

// One flag as written in an argument list. `--flag value` and `--flag=value` are the same
// flag; the value's index points at the token that holds it (the flag's own token for the
// `=` form), so a finding about a value names that element.
struct FlagOccurrence {
    std::string_view name;  // as written, cut at the first '='
    std::optional<std::string_view> value;
    std::size_t flag_index = 0;
    std::size_t value_index = 0;
    // The name is read with its `_` as `-` (vLLM takes `--tensor_parallel_size` for
    // `--tensor-parallel-size`): set for a long flag with a `_`, where the engine does so.
    bool underscores_are_dashes = false;

    // Whether the engine reads the name as `spelled`; compared in place, so that looking a
    // flag up allocates nothing.
    bool reads_as(std::string_view spelled) const {
        return underscores_are_dashes ? same_flag_name(name, spelled, true) : name == spelled;
    }
    // Whether the name, as the engine reads it, begins `spelled` (an abbreviation of it).
    bool abbreviates(std::string_view spelled) const {
        return underscores_are_dashes ? same_flag_name(name, spelled, true, true)
                                      : spelled.starts_with(name);
    }
};

// The flags of an argument list, in order, up to a bare `--` (after which argparse reads only
// positional arguments). The tokens must outlive the stream.
class ArgStream {
  public:
    ArgStream() = default;
    // With `underscores_are_dashes`, a long flag's `_` is read as `-`, as vLLM's parser does.
    // The flags are kept in `memory`.
    explicit ArgStream(std::span<const std::string_view> tokens,
                       bool underscores_are_dashes = false,
                       std::pmr::memory_resource* memory = std::pmr::get_default_resource());
    explicit ArgStream(const std::vector<std::string>& tokens, bool underscores_are_dashes = false);

    std::span<const FlagOccurrence> flags() const { return flags_; }
    // The last occurrence of any of `names` (the last one wins, as in the engines' parsers).
    const FlagOccurrence* last(std::initializer_list<std::string_view> names) const;
    bool has(std::initializer_list<std::string_view> names) const { return last(names) != nullptr; }
    // The last occurrence's value read as the engine reads an integer, if it is one.
    std::optional<std::int64_t> integer(std::initializer_list<std::string_view> names) const;
    // The same, for names the rule data lists.
    const FlagOccurrence* last_of(const std::vector<std::string>& names) const;
    bool has_any(const std::vector<std::string>& names) const { return last_of(names) != nullptr; }
    std::optional<std::int64_t> integer_of(const std::vector<std::string>& names) const;

  private:
    template <typename Tokens>
    void read(const Tokens& tokens, bool underscores_are_dashes);
    template <typename Names>
    const FlagOccurrence* last_named(const Names& names) const;
    static std::optional<std::int64_t> value_integer(const FlagOccurrence* flag);

    std::pmr::vector<FlagOccurrence> flags_;
};

// A decimal integer, optionally negative, and nothing else; nullopt beyond int64.
std::optional<std::int64_t> parse_integer(std::string_view text);
// An integer as the engines' Python parsers read a flag's value ("8", "+4", " 2 ", "1_000");
// nullopt for anything else, and for values beyond int64.
std::optional<std::int64_t> parse_engine_integer(std::string_view text);

}  // namespace mdadmit::rules
