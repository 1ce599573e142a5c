#include "left_out_values.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mdadmit::admission {

namespace {

constexpr std::size_t npos = std::string_view::npos;

// Strings have a fast path over the bytes that need no look: the scans stop only at these.
enum ByteClass : unsigned char { plain, quote, backslash, control, non_ascii };

constexpr std::array<ByteClass, 256> byte_classes = [] {
    std::array<ByteClass, 256> classes{};
    for (std::size_t c = 0; c < classes.size(); ++c) {
        classes[c] = c == '"'    ? quote
                     : c == '\\' ? backslash
                     : c < 0x20  ? control
                     : c >= 0x80 ? non_ascii
                                 : plain;
    }
    return classes;
}();

ByteClass class_of(char c) {
    return byte_classes[static_cast<unsigned char>(c)];
}

// The byte at `i`, or NUL past the end: NUL is a byte no JSON grammar takes outside strings, and
// a string's scan refuses it, so the end needs no test of its own.
char at(std::string_view text, std::size_t i) {
    return i < text.size() ? text[i] : '\0';
}

bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::size_t skip_space(std::string_view text, std::size_t i) {
    // Compact JSON, as kube-apiserver writes it, has no space between tokens: one test passes it.
    if (i < text.size() && static_cast<unsigned char>(text[i]) > ' ') {
        return i;
    }
    while (is_space(at(text, i))) {
        ++i;
    }
    return i;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// The letters a one-letter escape may have after its backslash.
constexpr std::array<bool, 256> one_letter_escapes = [] {
    std::array<bool, 256> letters{};
    for (const unsigned char c : std::string_view(R"("\/bfnrt)")) {
        letters[c] = true;
    }
    return letters;
}();

bool is_one_letter_escape(char c) {
    return one_letter_escapes[static_cast<unsigned char>(c)];
}

// One past an escape at `i` (a backslash), or npos. Half a surrogate pair is left to Boost.JSON,
// which checks that its other half follows.
std::size_t escape_end(std::string_view text, std::size_t i) {
    const char letter = at(text, i + 1);
    if (is_one_letter_escape(letter)) {
        return i + 2;
    }
    if (letter != 'u') {
        return npos;
    }
    unsigned code = 0;
    for (std::size_t k = i + 2; k < i + 6; ++k) {
        const int digit = hex_value(at(text, k));
        if (digit < 0) {
            return npos;
        }
        code = code * 16 + static_cast<unsigned>(digit);
    }
    return code >= 0xd800 && code <= 0xdfff ? npos : i + 6;
}

bool in(char c, unsigned low, unsigned high) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= low && byte <= high;
}

// One past a UTF-8 sequence at `i`, or npos: well-formed UTF-8 (RFC 3629), no overlong forms,
// no surrogates, nothing past U+10FFFF.
std::size_t utf8_end(std::string_view text, std::size_t i) {
    const auto lead = static_cast<unsigned char>(text[i]);
    unsigned second_low = 0x80;
    unsigned second_high = 0xbf;
    std::size_t continuation = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
        continuation = 1;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        continuation = 2;
        second_low = lead == 0xe0 ? 0xa0 : 0x80;
        second_high = lead == 0xed ? 0x9f : 0xbf;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        continuation = 3;
        second_low = lead == 0xf0 ? 0x90 : 0x80;
        second_high = lead == 0xf4 ? 0x8f : 0xbf;
    } else {
        return npos;
    }
    if (!in(at(text, i + 1), second_low, second_high)) {
        return npos;
    }
    for (std::size_t k = i + 2; k <= i + continuation; ++k) {
        if (!in(at(text, k), 0x80, 0xbf)) {
            return npos;
        }
    }
    return i + 1 + continuation;
}

// Past the plain bytes and one-letter escapes of a string from `i`: where a byte needs a closer
// look (a quote that ends the string, a control byte, the start of a UTF-8 sequence, another
// escape), or the text's size. Where SSE2 is there (every x86-64) sixteen bytes are looked at a
// time, escapes included: the last applied form runs a few bytes between escaped quotes.
std::size_t past_plain(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
    const __m128i quotes = _mm_set1_epi8('"');
    const __m128i backslashes = _mm_set1_epi8('\\');
    const __m128i spaces = _mm_set1_epi8(0x20);
    // The bytes after the sixteen are read too (the letters of their escapes, from the second byte
    // on), so one byte more must be there.
    while (i + 17 <= text.size()) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
        const auto escapes =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, backslashes)));
        // Compared as signed bytes, those of 0x80 and above are below 0x20 too.
        const auto stops = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(bytes, quotes), _mm_cmplt_epi8(bytes, spaces))));
        if (escapes == 0) {
            if (stops == 0) {
                i += 16;
                continue;
            }
            return i + static_cast<std::size_t>(__builtin_ctz(stops));
        }
        // A backslash after a backslash is escaped itself: such runs are taken one at a time.
        if ((escapes & (escapes << 1)) != 0) {
            return i + static_cast<std::size_t>(__builtin_ctz(escapes | stops));
        }
        // Each backslash escapes the byte after it, which then ends nothing.
        const unsigned ends = stops & ~(escapes << 1) & 0xffff;
        const unsigned end = ends != 0 ? static_cast<unsigned>(__builtin_ctz(ends)) : 16;
        // An escaped quote, most of a last applied form's escapes, needs no look of its own.
        const __m128i letters =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i + 1));
        const auto quoted =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(letters, quotes)));
        for (unsigned before = escapes & ((1u << end) - 1) & ~quoted; before != 0;
             before &= before - 1) {
            const std::size_t escape = i + static_cast<std::size_t>(__builtin_ctz(before));
            if (!is_one_letter_escape(at(text, escape + 1))) {
                return escape;
            }
        }
        if (ends != 0) {
            return i + end;
        }
        // A backslash in the last place escapes the first byte of the next sixteen.
        i += 16 + ((escapes >> 15) & 1);
    }
#endif
    while (i < text.size()) {
        if (class_of(text[i]) == plain) {
            ++i;
        } else if (text[i] == '\\' && is_one_letter_escape(at(text, i + 1))) {
            i += 2;
        } else {
            break;
        }
    }
    return i;
}

// One past a string at `i` (its opening quote), checked, or npos.
std::size_t checked_string_end(std::string_view text, std::size_t i) {
    ++i;
    for (;;) {
        i = past_plain(text, i);
        if (i >= text.size()) {
            return npos;
        }
        switch (class_of(text[i])) {
            case quote:
                return i + 1;
            case backslash:
                i = escape_end(text, i);
                break;
            case non_ascii:
                i = utf8_end(text, i);
                break;
            case control:
            case plain:
                return npos;
        }
        if (i == npos) {
            return npos;
        }
    }
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Past this many digits a number without an exponent could overflow a double (1e308).
constexpr std::size_t most_number_digits = 300;

// One past a number at `i`, or npos: JSON's grammar without an exponent, whose value Boost.JSON
// would have to check for overflow.
std::size_t number_end(std::string_view text, std::size_t i) {
    const std::size_t start = i;
    if (at(text, i) == '-') {
        ++i;
    }
    if (at(text, i) == '0') {
        ++i;
    } else if (is_digit(at(text, i))) {
        while (is_digit(at(text, i))) {
            ++i;
        }
    } else {
        return npos;
    }
    if (at(text, i) == '.') {
        ++i;
        if (!is_digit(at(text, i))) {
            return npos;
        }
        while (is_digit(at(text, i))) {
            ++i;
        }
    }
    if (at(text, i) == 'e' || at(text, i) == 'E' || i - start > most_number_digits) {
        return npos;
    }
    return i;
}

std::size_t literal_end(std::string_view text, std::size_t i, std::string_view literal) {
    return text.substr(i, literal.size()) == literal ? i + literal.size() : npos;
}

// One past a scalar at `i`, or npos.
std::size_t scalar_end(std::string_view text, std::size_t i) {
    switch (at(text, i)) {
        case '"':
            return checked_string_end(text, i);
        case 't':
            return literal_end(text, i, "true");
        case 'f':
            return literal_end(text, i, "false");
        case 'n':
            return literal_end(text, i, "null");
        default:
            return number_end(text, i);
    }
}

// The containers nested are tracked one bit each (set for an object), so no more than 64.
constexpr std::size_t most_tracked_nesting = 64;

// One past the value at `i` (its first byte), checked, or npos.
std::size_t checked_value_end(std::string_view text, std::size_t i, std::size_t max_nesting) {
    if (max_nesting > most_tracked_nesting) {
        max_nesting = most_tracked_nesting;
    }
    std::uint64_t objects = 0;  // bit n: the container at nesting n + 1 is an object
    std::size_t nesting = 0;
    bool expect_key = false;
    for (;;) {
        // A value begins at i, or a key of the innermost object.
        if (expect_key) {
            if (at(text, i) != '"') {
                return npos;
            }
            i = skip_space(text, checked_string_end(text, i));
            if (i == npos || at(text, i) != ':') {
                return npos;
            }
            i = skip_space(text, i + 1);
        }
        const char c = at(text, i);
        if (c == '{' || c == '[') {
            if (nesting == max_nesting) {
                return npos;
            }
            const bool object = c == '{';
            objects =
                (objects & ~(std::uint64_t{1} << nesting)) | (std::uint64_t{object} << nesting);
            ++nesting;
            i = skip_space(text, i + 1);
            if (at(text, i) != (object ? '}' : ']')) {
                expect_key = object;
                continue;
            }
            --nesting;
            ++i;
        } else {
            i = scalar_end(text, i);
            if (i == npos) {
                return npos;
            }
        }
        // A value has ended at i: its container goes on, ends, or there is none.
        for (;;) {
            if (nesting == 0) {
                return i;
            }
            const bool object = (objects >> (nesting - 1)) & 1;
            i = skip_space(text, i);
            if (at(text, i) == ',') {
                i = skip_space(text, i + 1);
                expect_key = object;
                break;
            }
            if (at(text, i) != (object ? '}' : ']')) {
                return npos;
            }
            --nesting;
            ++i;
        }
    }
}

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
