#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Byte-level checks of JSON text, as Boost.JSON reads it (strict JSON, valid UTF-8), shared by
// the search for left-out values and the review's tokenizer. Inline: both call them once per
// string of a review, in loops where a call would cost as much as the check.
namespace mdadmit::admission::json_scan {

inline constexpr std::size_t npos = std::string_view::npos;

// Strings have a fast path over the bytes that need no look: the scans stop only at these.
enum ByteClass : unsigned char { plain, quote, backslash, control, non_ascii };

inline constexpr std::array<ByteClass, 256> byte_classes = [] {
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

inline ByteClass class_of(char c) {
    return byte_classes[static_cast<unsigned char>(c)];
}

// The byte at `i`, or NUL past the end: NUL is a byte no JSON grammar takes outside strings, and
// a string's scan refuses it, so the end needs no test of its own.
inline char at(std::string_view text, std::size_t i) {
    return i < text.size() ? text[i] : '\0';
}

inline bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline std::size_t skip_space(std::string_view text, std::size_t i) {
    // Compact JSON, as kube-apiserver writes it, has no space between tokens: one test passes it;
    // a space after a colon or comma is often one alone. Past the end (npos included) is where
    // it stays.
    if (i >= text.size() || static_cast<unsigned char>(text[i]) > ' ') {
        return i;
    }
    if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) > ' ' && is_space(text[i])) {
        return i + 1;
    }
#if defined(__SSE2__)
    // Indentation, sixteen bytes at a time.
    for (; i + 16 <= text.size(); i += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
        const __m128i spaces =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(' ')),
                                      _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'))),
                         _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\r')),
                                      _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t'))));
        const unsigned others = ~static_cast<unsigned>(_mm_movemask_epi8(spaces)) & 0xffff;
        if (others != 0) {
            return i + static_cast<std::size_t>(__builtin_ctz(others));
        }
    }
#endif
    while (is_space(at(text, i))) {
        ++i;
    }
    return i;
}

inline int hex_value(char c) {
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
inline constexpr std::array<bool, 256> one_letter_escapes = [] {
    std::array<bool, 256> letters{};
    for (const unsigned char c : std::string_view(R"("\/bfnrt)")) {
        letters[c] = true;
    }
    return letters;
}();

inline bool is_one_letter_escape(char c) {
    return one_letter_escapes[static_cast<unsigned char>(c)];
}

// One past an escape at `i` (a backslash), or npos. Half a surrogate pair is left to Boost.JSON,
// which checks that its other half follows.
inline std::size_t escape_end(std::string_view text, std::size_t i) {
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

inline bool in(char c, unsigned low, unsigned high) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= low && byte <= high;
}

// One past a UTF-8 sequence at `i`, or npos: well-formed UTF-8 (RFC 3629), no overlong forms,
// no surrogates, nothing past U+10FFFF.
inline std::size_t utf8_end(std::string_view text, std::size_t i) {
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
inline std::size_t past_plain(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
    const __m128i quotes = _mm_set1_epi8('"');
    const __m128i backslashes = _mm_set1_epi8('\\');
    const __m128i spaces = _mm_set1_epi8(0x20);
    const auto stopping = [&](__m128i bytes) {
        // Compared as signed bytes, those of 0x80 and above are below 0x20 too.
        return _mm_or_si128(_mm_cmpeq_epi8(bytes, quotes), _mm_cmplt_epi8(bytes, spaces));
    };
    const auto load = [&](std::size_t k) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + k));
    };
    // The bytes after the sixteen are read too (the letters of their escapes, from the second byte
    // on), so one byte more must be there.
    while (i + 17 <= text.size()) {
        const __m128i bytes = load(i);
        const auto escapes =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, backslashes)));
        const auto stops = static_cast<unsigned>(_mm_movemask_epi8(stopping(bytes)));
        if (escapes == 0) {
            if (stops == 0) {
                i += 16;
                // A run of plain bytes may be long (an annotation's, a large object's): one test
                // for thirty-two of them, until a byte needs a look.
                while (i + 33 <= text.size()) {
                    const __m128i first = load(i);
                    const __m128i second = load(i + 16);
                    const __m128i looks = _mm_or_si128(
                        _mm_or_si128(stopping(first), _mm_cmpeq_epi8(first, backslashes)),
                        _mm_or_si128(stopping(second), _mm_cmpeq_epi8(second, backslashes)));
                    if (_mm_movemask_epi8(looks) != 0) {
                        break;
                    }
                    i += 32;
                }
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
        const __m128i letters = load(i + 1);
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

// One past the string whose content goes on at `i` (a byte after its opening quote), checked,
// or npos.
inline std::size_t checked_string_rest_end(std::string_view text, std::size_t i) {
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

#if defined(__SSE2__)
// Bit n: the byte at `i` + n, of sixteen, needs a closer look than printable ASCII without
// escapes (a quote, a backslash, a control byte, a byte of UTF-8 beyond ASCII).
inline unsigned plain_stops(std::string_view text, std::size_t i) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    // Compared as signed bytes, those of 0x80 and above are below 0x20 too.
    return static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))),
                                       _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)))));
}
#endif

// Where the printable ASCII bytes without escapes that a string's content begins with at `i`
// end: at the byte that needs a closer look, or the text's size. Most of a review's keys and
// strings are such bytes up to their closing quote.
inline std::size_t plain_prefix_end(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
    for (; i + 16 <= text.size(); i += 16) {
        if (const unsigned stops = plain_stops(text, i); stops != 0) {
            return i + static_cast<std::size_t>(__builtin_ctz(stops));
        }
    }
#endif
    while (i < text.size() && class_of(text[i]) == plain) {
        ++i;
    }
    return i;
}

// One past a string at `i` (its opening quote), checked, or npos.
inline std::size_t checked_string_end(std::string_view text, std::size_t i) {
    ++i;
#if defined(__SSE2__)
    // Most keys (managedFields' are all keys) are short and plain: one look at sixteen bytes
    // ends them. A long string goes on in past_plain's longer steps after the sixteen looked at.
    if (i + 16 <= text.size()) {
        const unsigned stops = plain_stops(text, i);
        if (stops == 0) {
            return checked_string_rest_end(text, i + 16);
        }
        const std::size_t stop = i + static_cast<std::size_t>(__builtin_ctz(stops));
        return text[stop] == '"' ? stop + 1 : checked_string_rest_end(text, stop);
    }
#endif
    return checked_string_rest_end(text, i);
}

// One past the key or string whose content goes on at `i`, after its plain prefix, with its
// text (decoded into `unescaped`, whose memory is kept) in `out`; npos where Boost.JSON refuses
// it or where it holds half a surrogate pair. The path of strings with escapes or beyond ASCII,
// out of line.
std::size_t decoded_string_end(std::string_view text, std::size_t content, std::size_t i,
                               std::string_view& out, std::string& unescaped);

// One past the key or string at `i` (its opening quote), with its text in `out`: a view of
// `text` for most strings, decoded into `unescaped` for those with escapes. npos as
// decoded_string_end.
inline std::size_t string_end(std::string_view text, std::size_t i, std::string_view& out,
                              std::string& unescaped) {
    const std::size_t content = i + 1;
    const std::size_t stop = plain_prefix_end(text, content);
    if (stop < text.size() && text[stop] == '"') [[likely]] {
        out = std::string_view(text.data() + content, stop - content);
        return stop + 1;
    }
    return decoded_string_end(text, content, stop, out, unescaped);
}

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The most digits of an integer read here: any such fits an int64.
inline constexpr std::size_t most_integer_digits = 18;

// Reads an integer at `i` (JSON's grammar, no fraction or exponent) of at most
// most_integer_digits digits into `value`, and moves `i` past it; false, `i` unmoved, for any
// other text, numbers that Boost.JSON reads as a double or uint64 included.
inline bool read_integer(std::string_view text, std::size_t& i, std::int64_t& value) {
    const bool negative = at(text, i) == '-';
    const std::size_t digits_begin = i + (negative ? 1 : 0);
    std::size_t k = digits_begin;
    std::uint64_t magnitude = 0;
    if (at(text, k) == '0') {
        ++k;
    } else {
        for (; is_digit(at(text, k)); ++k) {
            if (k - digits_begin == most_integer_digits) {
                return false;
            }
            magnitude = magnitude * 10 + static_cast<std::uint64_t>(at(text, k) - '0');
        }
    }
    const char after = at(text, k);
    if (k == digits_begin || after == '.' || after == 'e' || after == 'E' || is_digit(after)) {
        return false;
    }
    const auto signed_magnitude = static_cast<std::int64_t>(magnitude);
    value = negative ? -signed_magnitude : signed_magnitude;
    i = k;
    return true;
}

// The containers a scan has open, innermost last, each an object or an array: a bit each, so no
// more than `most`.
class OpenContainers {
  public:
    static constexpr std::size_t most = 64;

    std::size_t size() const { return size_; }
    void open(bool object) {
        kinds_ = (kinds_ & ~(std::uint64_t{1} << size_)) | (std::uint64_t{object} << size_);
        ++size_;
    }
    void close() { --size_; }
    bool innermost_is_object() const { return (kinds_ >> (size_ - 1)) & 1; }

  private:
    std::uint64_t kinds_ = 0;  // bit n: the container n + 1 deep is an object
    std::size_t size_ = 0;
};

// One past the value at `i` (its first byte), checked to be exactly one JSON value with at most
// `max_nesting` containers nested that Boost.JSON reads without error, or npos. A number with an
// exponent or written in more than 300 characters, a `\u` escape of half a surrogate pair, or
// nesting beyond 64 are not taken: npos for them means "not checked here", not "invalid".
std::size_t checked_value_end(std::string_view text, std::size_t i, std::size_t max_nesting);

}  // namespace mdadmit::admission::json_scan
