#include "parallel_degrees.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

namespace mdadmit::rules {

namespace {

// What a flag occurrence is in the table: a degree, a wiring flag, a narrowing mode, or
// nothing. A flag matches by an exact spelling, or else, where the engine's parser takes
// abbreviations, as a unique prefix of one long spelling of the table.
struct Resolved {
    enum class Kind { none, degree, wiring, narrowing } kind = Kind::none;
    const ParallelDegree* degree = nullptr;
};

Resolved resolved(const ParallelTable& table, const ParallelTable::Spelling& spelling) {
    switch (spelling.kind) {
        case ParallelTable::Spelling::Kind::degree:
            return {Resolved::Kind::degree, &table.degrees[spelling.degree]};
        case ParallelTable::Spelling::Kind::wiring:
            return {Resolved::Kind::wiring, nullptr};
        case ParallelTable::Spelling::Kind::narrowing:
            break;
    }
    return {Resolved::Kind::narrowing, nullptr};
}

Resolved resolve(const ParallelTable& table, const FlagOccurrence& flag,
                 const FlagSpelling& spelling) {
    std::string dashed;  // only for a name whose `_` the engine reads as `-`
    std::string_view name = flag.name;
    if (flag.underscores_are_dashes) {
        dashed.assign(name);
        std::replace(dashed.begin() + 2, dashed.end(), '_', '-');
        name = dashed;
    }
    const auto& all = table.spellings;
    const auto first = std::lower_bound(all.begin(), all.end(), name,
                                        [](const ParallelTable::Spelling& entry,
                                           std::string_view text) { return entry.text < text; });
    auto past_exact = first;
    while (past_exact != all.end() && past_exact->text == name) {
        ++past_exact;
    }
    if (past_exact != first) {
        return resolved(table, *std::prev(past_exact));  // listed twice: the later one counts
    }
    if (!spelling.unique_prefixes || !name.starts_with("--")) {
        return {};
    }
    // The spellings `name` abbreviates sort together, right after where `name` would be.
    auto past_prefixed = first;
    while (past_prefixed != all.end() && std::string_view(past_prefixed->text).starts_with(name)) {
        ++past_prefixed;
    }
    return past_prefixed - first == 1 ? resolved(table, *first) : Resolved{};
}

}  // namespace

std::size_t DeclaredParallelism::position(std::string_view degree) const {
    std::size_t at = 0;
    while (at < values.size() && values[at].first != degree) {
        ++at;
    }
    return at;
}

std::int64_t DeclaredParallelism::value(std::string_view degree) const {
    const std::size_t at = position(degree);
    return at < values.size() ? values[at].second : 1;
}

bool DeclaredParallelism::declared(std::string_view degree) const {
    return position(degree) < values.size();
}

void DeclaredParallelism::set(std::string_view degree, std::int64_t value) {
    const std::size_t at = position(degree);
    if (at < values.size()) {
        values[at].second = value;
    } else {
        values.emplace_back(degree, value);
    }
}

DeclaredParallelism read_parallelism(const ParallelTable& table, const ArgStream& args,
                                     std::string_view args_field, std::span<const EnvVar> env,
                                     const FlagSpelling& spelling, Memory memory) {
    DeclaredParallelism out{.values = List<std::pair<std::string_view, std::int64_t>>(memory),
                            .problems = {}};
    const auto token_field = [&](std::size_t index) {
        return std::string(args_field) + "[" + std::to_string(index) + "]";
    };
    for (const auto& flag : args.flags()) {
        const Resolved resolved = resolve(table, flag, spelling);
        if (resolved.kind == Resolved::Kind::wiring) {
            out.wired = true;
            continue;
        }
        if (resolved.kind == Resolved::Kind::narrowing) {
            out.narrowed = true;
            continue;
        }
        const ParallelDegree* degree = resolved.degree;
        if (degree == nullptr) {
            continue;
        }
        const auto value = flag.value ? parse_engine_integer(*flag.value) : std::nullopt;
        if (value && *value >= degree->minimum) {
            out.set(degree->name, *value);
            continue;
        }
        out.problems.push_back(
            {token_field(flag.value ? flag.value_index : flag.flag_index), std::string(flag.name),
             flag.value ? std::optional<std::string>(*flag.value) : std::nullopt, degree->minimum});
    }
    for (const auto& degree : table.degrees) {
        if (degree.env.empty()) {
            continue;
        }
        // The environment counts only where no flag sets more than one rank, and not when a
        // local share of zero says this member starts no ranks of its own.
        const auto local =
            std::find_if(table.degrees.begin(), table.degrees.end(),
                         [](const auto& d) { return d.use == DegreeUse::data_local; });
        if (out.value(degree.name) > 1 ||
            (local != table.degrees.end() && out.declared(local->name) &&
             out.value(local->name) == 0)) {
            continue;
        }
        for (std::size_t k = env.size(); k-- > 0;) {
            if (env[k].name != degree.env) {
                continue;
            }
            const auto value = parse_engine_integer(env[k].value);
            if (value && *value >= degree.minimum) {
                out.set(degree.name, *value);
            } else {
                out.problems.push_back({"env[" + std::to_string(k) + "]", degree.env,
                                        std::string(env[k].value), degree.minimum});
            }
            break;  // the last entry is the one the Pod gets
        }
    }
    for (const auto& degree : table.degrees) {
        if (degree.use == DegreeUse::narrows_data && out.value(degree.name) > 1) {
            out.narrowed = true;
        }
    }
    return out;
}

std::string MemberWidth::factors_text() const {
    std::string text;
    for (const auto& [name, value] : factors) {
        text.append(text.empty() ? "" : " x ")
            .append(name)
            .append(" ")
            .append(std::to_string(value));
    }
    return text;
}

MemberWidth member_width(const ParallelTable& table, const DeclaredParallelism& declared,
                         Memory memory) {
    MemberWidth out{.factors = List<std::pair<std::string_view, std::int64_t>>(memory)};
    const auto multiply = [&](std::string_view name, std::int64_t value) {
        if (value == 1) {
            return;
        }
        if (__builtin_mul_overflow(out.accelerators, value, &out.accelerators)) {
            out.accelerators = std::numeric_limits<std::int64_t>::max();
        }
        out.factors.emplace_back(name, value);
    };
    const ParallelDegree* data = nullptr;
    const ParallelDegree* local = nullptr;
    for (const auto& degree : table.degrees) {
        if (degree.use == DegreeUse::width) {
            multiply(degree.name, declared.value(degree.name));
        } else if (degree.use == DegreeUse::data) {
            data = &degree;
        } else if (degree.use == DegreeUse::data_local) {
            local = &degree;
        }
    }
    if (declared.narrowed) {
        return out;  // the data-parallel ranks share the member's accelerators
    }
    // A local share above one replaces the data-parallel size; a share of one starts one
    // rank here; none (or zero) leaves the whole size on this member.
    if (local != nullptr && declared.declared(local->name) && declared.value(local->name) >= 1) {
        multiply(local->name, declared.value(local->name));
    } else if (data != nullptr) {
        multiply(data->name, declared.value(data->name));
    }
    return out;
}

}  // namespace mdadmit::rules
