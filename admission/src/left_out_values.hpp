#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace mdadmit::admission {

// Where the costliest members the review parser leaves out lie in a review's bytes: the
// `annotations` of `request.object.metadata` and `request.oldObject.metadata`, and the
// `managedFields` that follow them. An object applied with kubectl carries its whole last applied
// form in an annotation, as one string whose every quote is escaped: Boost.JSON's tokenizer reads
// such a string a byte at a time, a fifth of the instructions of such a review. managedFields is a
// tree of small objects (a key for each field its managers set), which the tokenizer reads a token
// and a call to the parser's handler at a time. Found here, a value is checked by a scan that
// decodes and calls nothing, and the tokenizer is given `null` in its place.
struct LeftOutValue {
    std::size_t begin = 0;  // the value's first byte
    std::size_t end = 0;    // one past its last
};

struct LeftOutValues {
    // The values found, in the order of the body: two for the object and two for the old object,
    // and room for annotations written elsewhere (which the parser then reads).
    std::array<LeftOutValue, 8> values;
    std::size_t count = 0;

    const LeftOutValue* begin() const { return values.data(); }
    const LeftOutValue* end() const { return values.data() + count; }
};

// The containers open where a value found lies: the document, request, the object, metadata.
inline constexpr std::size_t left_out_value_nesting = 4;

// Finds, in body order, the values of the keys written `"annotations"` (followed by a colon) in
// the first 64 KiB of the body, if a backslash is written there at all, and of a `"managedFields"`
// that follows one of them in the same object (past an `ownerReferences` and a `finalizers`, which
// kube-apiserver writes between them). Each is checked as exactly one JSON value that Boost.JSON
// reads without error at `left_out_value_nesting` containers in a document of at most
// `max_depth`. A name inside a value found is not looked for, and a value the check does not take
// ends the search. Which of them are the object's members the parser leaves out is not known
// here: the parser, once it has read all before one, says whether it leaves out the value that
// follows (ReviewParser::write). A name found in a valid document where it is a whole key is a
// whole key to the parser too: inside a string its closing quote would be escaped.
LeftOutValues find_left_out_values(std::string_view body, std::size_t max_depth);

// Whether `text` is exactly one JSON value with at most `max_nesting` containers nested, that
// Boost.JSON reads without error (strict JSON: no comments or trailing commas, valid UTF-8). A
// number with an exponent or written in more than 300 characters is not taken, nor a `\u` escape of
// half a surrogate pair: false for them means "not checked here", not "invalid".
bool is_checked_json_value(std::string_view text, std::size_t max_nesting);

}  // namespace mdadmit::admission
