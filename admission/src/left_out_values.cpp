#include "left_out_values.hpp"

#include "json_scan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mdadmit::admission {

namespace {

using namespace json_scan;

// Where `quoted_name` (a name and its quotes) is next written at or after `from`, or npos. The
// SSE2 path looks for the name's first and last letters at their distance, sixteen places at a
// time (a letter pair is rarer in JSON than the quotes around every string), and compares the
// whole name only there.
std::size_t find_quoted(std::string_view body, std::size_t from, std::string_view quoted_name) {
    const std::size_t size = quoted_name.size();
#if defined(__SSE2__)
    const __m128i first = _mm_set1_epi8(quoted_name[1]);
    const __m128i last = _mm_set1_epi8(quoted_name[size - 2]);
    // k is where the name's first letter may be, so the name itself begins at k - 1.
    std::size_t k = from + 1;
    for (; k + (size - 3) + 16 <= body.size(); k += 16) {
        const auto* data = body.data();
        const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + k));
        const __m128i at_last =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + k + size - 3));
        auto mask = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
        for (; mask != 0; mask &= mask - 1) {
            const std::size_t begin = k - 1 + static_cast<std::size_t>(__builtin_ctz(mask));
            if (body.compare(begin, size, quoted_name) == 0) {
                return begin;
            }
        }
    }
    from = k - 1;
#endif
    if (from >= body.size()) {
        return npos;
    }
    const void* found = ::memmem(body.data() + from, body.size() - from, quoted_name.data(), size);
    return found == nullptr
               ? npos
               : static_cast<std::size_t>(static_cast<const char*>(found) - body.data());
}

// A name written as a key: where its opening quote is, and where its value begins (past the
// colon and any space); npos for both when there is none.
struct KeyAt {
    std::size_t key = npos;
    std::size_t value = npos;
};

// The bytes searched for names: a review's object has its metadata first (as kube-apiserver
// writes it), and past this a body is mostly a large spec or status, where the search would cost
// more than it could save.
constexpr std::size_t searched_bytes = 64 * 1024;

// Where `quoted_name` is next written at or after `from`, followed by a colon, within the bytes
// searched.
KeyAt next_key(std::string_view body, std::size_t from, std::string_view quoted_name) {
    const std::string_view searched = body.substr(0, searched_bytes);
    for (;;) {
        const std::size_t key = find_quoted(searched, from, quoted_name);
        if (key == npos) {
            return {};
        }
        const std::size_t colon = skip_space(body, key + quoted_name.size());
        if (at(body, colon) == ':') {
            return {key, skip_space(body, colon + 1)};
        }
        from = key + 1;
    }
}

// The members kube-apiserver may write between an object's annotations and its managedFields:
// it writes metadata's members in the order of their Go fields, whose last three are these two
// and managedFields.
constexpr std::array<std::string_view, 2> members_before_managed_fields{R"("ownerReferences")",
                                                                        R"("finalizers")"};

// What the walk from annotations found to their object's managedFields met.
struct ManagedFields {
    std::optional<LeftOutValue> value;  // the managedFields' value, checked
    bool refused = false;               // something on the way the check does not take
};

// The managedFields that follow the annotations ending at `from`, past the members that may be
// written between them (checked too); none when another member comes first or the object ends.
ManagedFields managed_fields_after(std::string_view body, std::size_t from, std::size_t nesting) {
    constexpr std::string_view managed_fields = R"("managedFields")";
    std::size_t i = skip_space(body, from);
    for (std::size_t members = 0; members <= members_before_managed_fields.size(); ++members) {
        if (at(body, i) != ',') {
            return {};
        }
        i = skip_space(body, i + 1);
        const std::size_t key_end = at(body, i) == '"' ? checked_string_end(body, i) : npos;
        const std::size_t colon = key_end == npos ? npos : skip_space(body, key_end);
        if (colon == npos || at(body, colon) != ':') {
            return {.value = std::nullopt, .refused = true};
        }
        const std::string_view key = body.substr(i, key_end - i);
        const std::size_t value = skip_space(body, colon + 1);
        const bool before =
            std::find(members_before_managed_fields.begin(), members_before_managed_fields.end(),
                      key) != members_before_managed_fields.end();
        if (key != managed_fields && !before) {
            return {};
        }
        const std::size_t value_end = checked_value_end(body, value, nesting);
        if (value_end == npos) {
            return {.value = std::nullopt, .refused = true};
        }
        if (!before) {
            return {.value = LeftOutValue{value, value_end}, .refused = false};
        }
        i = skip_space(body, value_end);
    }
    return {};
}

}  // namespace

LeftOutValues find_left_out_values(std::string_view body, std::size_t max_depth) {
    constexpr std::string_view annotations = R"("annotations")";
    const std::size_t nesting =
        max_depth > left_out_value_nesting ? max_depth - left_out_value_nesting : 0;
    LeftOutValues found;
    // The tokenizer reads a string without escapes about as fast as the check would: a body
    // without a backslash has nothing to spare, and skips the search.
    if (body.empty() ||
        std::memchr(body.data(), '\\', std::min(body.size(), searched_bytes)) == nullptr) {
        return found;
    }
    for (KeyAt next = next_key(body, 0, annotations);
         next.key != npos && found.count < found.values.size();) {
        const std::size_t end = checked_value_end(body, next.value, nesting);
        // A value the check does not take ends the search: looking on inside it could check
        // what it holds again and again (annotations nested in annotations), and the tokenizer
        // reads it anyway.
        if (end == npos) {
            break;
        }
        found.values[found.count++] = {next.value, end};
        if (found.count == found.values.size()) {
            break;
        }
        // managedFields, a tree of small objects (a key for each field its managers set), is
        // cheaper to check than to tokenize too. It is taken where it follows annotations found,
        // as in an object applied with kubectl: a search of its own would cost more than it
        // saves. What the walk to it finds the check does not take ends the search, as above.
        const ManagedFields managed = managed_fields_after(body, end, nesting);
        if (managed.refused) {
            break;
        }
        std::size_t searched_from = end;
        if (managed.value) {
            found.values[found.count++] = *managed.value;
            searched_from = managed.value->end;
        }
        // A name inside a value found is not looked for.
        next = next_key(body, searched_from, annotations);
    }
    return found;
}

bool is_checked_json_value(std::string_view text, std::size_t max_nesting) {
    return checked_value_end(text, 0, max_nesting) == text.size();
}

}  // namespace mdadmit::admission
