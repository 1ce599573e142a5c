#pragma once

#include <boost/json/basic_parser.hpp>
#include <boost/json/value_stack.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "mdadmit/rules/model_builder.hpp"

namespace mdadmit::admission {

// Reads an AdmissionReview into a DOM, leaving out what no verdict reads: the `annotations` and
// `managedFields` of `request.object.metadata` and `request.oldObject.metadata`, and the
// envelope's descriptions of the request that admission never reads (`request.resource`,
// `requestKind`, `requestResource`, `options`, and `request.userInfo`'s `uid`, `groups` and
// `extra`). An object applied with kubectl carries its whole last applied form as an
// annotation, and the apiserver adds a managedFields entry per field manager: often most of a
// review's bytes; the envelope's parts are a tenth of a typical review's values. Their JSON is
// still read and checked, only no values are built for it. A number beyond a double (1e999) is
// refused where it is read, skipped parts included, instead of in a walk over the DOM.
//
// A review is read by a tokenizer of its own (document_tokenizer.hpp) in one straight pass.
// Where a left-out value begins, the tokenizer checks it with a scan that decodes nothing
// (json_scan::checked_value_end) and gives the handler `null`: a kubectl apply's last applied
// form is one long string of escaped quotes, which would otherwise be decoded only to be left
// out. A CREATE's object, most of a review's values, goes from the tokenizer straight to the
// builder (BuilderEvents), without this class's handler between them. A body the tokenizer does
// not take (an error, a number with a fraction or an exponent, half a surrogate pair, nesting
// past 64) is read again by Boost.JSON's tokenizer, given `null` for the left-out values found
// beforehand (left_out_values.hpp), so that errors and numbers are Boost.JSON's; the object then
// goes into the DOM, not to the builder.
//
// A parser is reused from one body to the next (reset(), then write()), so that the stack of
// values it grows for a large review is kept.
class ReviewParser {
  public:
    explicit ReviewParser(const boost::json::parse_options& options);
    // A parser whose stack of values starts in `stack` (`size` bytes, outliving the parser).
    ReviewParser(const boost::json::parse_options& options, unsigned char* stack, std::size_t size);

    // Starts a document whose values are allocated from `memory`.
    void reset(boost::json::storage_ptr memory);

    // For the document begun: `request.object` of a CREATE (an `operation` before it says so,
    // as kube-apiserver writes it) goes to `builder` instead of into the DOM, which then has no
    // `object`; diverted() tells whether it went. The caller still checks the DOM's operation
    // and kind, and parses again without diverting where they do not match.
    void divert_created_object(rules::ModelBuilder* builder) {
        parser_.handler().builder = builder;
    }
    bool diverted() const { return parser_.handler().diverted; }

    // Parses `body` as one whole document. On failure `ec` is set and `non_finite()` tells a
    // number beyond a double from malformed JSON.
    boost::json::value write(std::string_view body, boost::system::error_code& ec);

    bool non_finite() const { return parser_.handler().non_finite; }

    // How many of the last document's values were checked in place of being tokenized.
    std::size_t checked_values() const { return checked_values_; }

  private:
    // Reads `body` with Boost.JSON's tokenizer, given `null` in place of the left-out values
    // find_left_out_values finds.
    boost::json::value write_by_boost(std::string_view body, boost::system::error_code& ec);
    // Gives the tokenizer `bytes`, with `more` to come or not; false once it has failed.
    bool feed(std::string_view bytes, bool more, boost::system::error_code& ec);

    // Builds values as Boost.JSON's own parser does, except for the members skipped.
    struct Handler {
        static constexpr std::size_t max_object_size = boost::json::object::max_size();
        static constexpr std::size_t max_array_size = boost::json::array::max_size();
        static constexpr std::size_t max_key_size = boost::json::string::max_size();
        static constexpr std::size_t max_string_size = boost::json::string::max_size();

        // The objects on the way from the document's root to a skipped member are steps; a
        // member of a step is nothing of note (none), skipped, or the next step.
        enum class Step : unsigned char {
            none,
            skipped,
            root,
            request,
            object,  // request.object or request.oldObject
            metadata,
            user_info,
            operation  // request.operation: not an object, but whether it is CREATE decides
                       // where request.object goes
        };
        static Step after(Step step, std::string_view key);
        // The most steps open at once: the root, request, object or oldObject, metadata.
        static constexpr std::size_t path_length = 4;
        // The longest key any step reads, "requestResource"; a longer key matches none.
        static constexpr std::size_t longest_key = 15;

        Handler(unsigned char* stack, std::size_t size) : values({}, stack, size) {}

        // Whether the value the tokenizer reads next is one left out, at `nesting` containers:
        // its key has been read, and nothing of it yet.
        bool awaits_left_out_value(std::size_t nesting) const {
            return leaves_out_value() && depth == nesting;
        }
        // Whether the value the tokenizer reads next is one left out, at any nesting.
        bool leaves_out_value() const { return skipping && skip_depth == 0; }

        boost::json::value_stack values;
        std::size_t depth = 0;      // containers open
        std::size_t path_open = 0;  // of them, the steps (always the outermost)
        struct OpenStep {
            Step step;
            std::size_t skipped_members;  // left out of it so far
        };
        OpenStep steps[path_length];  // the steps open, from the root
        Step next = Step::none;       // the step the value about to begin is, if it is an object
        std::size_t skip_depth = 0;   // containers open inside a skipped value
        bool skipping = false;        // inside a skipped value
        bool non_finite = false;
        // Diverting request.object to a builder: where it goes, and whether an `operation` of
        // CREATE came before it. On the review's own tokenizer only (reset() takes the builder
        // away before Boost.JSON's reads a body): the object is a value left out of the events
        // here, read whole (BuilderEvents) where it begins. Whether it is the value about to
        // begin, and the values left out of it.
        rules::ModelBuilder* builder = nullptr;
        bool creating = false;  // request.operation, read so far, is CREATE
        bool diverted = false;
        bool object_next = false;
        std::size_t object_left_out_values = 0;
        char key[longest_key];     // a key given in parts, while it may still match
        std::size_t key_size = 0;  // its bytes so far; beyond longest_key it matches none

        void begin_document();
        void take_key(std::string_view key_text);
        bool begin_container(bool is_object);
        bool end_container();
        template <typename Push>
        bool scalar(Push push);

        // The callbacks the tokenizer makes for every value are inlined into it, as Boost.JSON's
        // own handler's are. reset() has begun the document.
        bool on_document_begin(boost::system::error_code&) { return true; }
        bool on_document_end(boost::system::error_code&) { return true; }
        [[gnu::always_inline]] inline bool on_object_begin(boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_object_end(std::size_t n, boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_array_begin(boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_array_end(std::size_t n, boost::system::error_code&);
        bool on_key_part(boost::json::string_view s, std::size_t n, boost::system::error_code&);
        // Most keys are in no container on the path: pushed at once.
        bool on_key(boost::json::string_view s, std::size_t n, boost::system::error_code& ec) {
            if (key_size == 0 && !skipping && depth != path_open) {
                values.push_key(s);
                return true;
            }
            return on_key_near_path(s, n, ec);
        }
        bool on_key_near_path(boost::json::string_view s, std::size_t n,
                              boost::system::error_code&);
        // Whether request.object, whose key has just been read, goes to the builder.
        bool divert();
        // The tokenizer's question where a value left out begins (ReadsWholeValues): `i` for a
        // value it checks, else one past the diverted object (and white space), read into the
        // builder.
        std::size_t whole_value_end(std::string_view text, std::size_t i, std::size_t max_nesting,
                                    std::string& unescaped) {
            return object_next ? object_end(text, i, max_nesting, unescaped) : i;
        }
        [[gnu::noinline]] std::size_t object_end(std::string_view text, std::size_t i,
                                                 std::size_t max_nesting, std::string& unescaped);
        bool on_string_part(boost::json::string_view s, std::size_t n, boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_string(boost::json::string_view s, std::size_t n,
                                                     boost::system::error_code&);
        bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
        [[gnu::always_inline]] inline bool on_int64(std::int64_t i, boost::json::string_view,
                                                    boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_uint64(std::uint64_t u, boost::json::string_view,
                                                     boost::system::error_code&);
        bool on_double(double d, boost::json::string_view, boost::system::error_code& ec);
        [[gnu::always_inline]] inline bool on_bool(bool b, boost::system::error_code&);
        [[gnu::always_inline]] inline bool on_null(boost::system::error_code&);
        bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
        bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
    };

    std::size_t max_depth_;
    std::size_t checked_values_ = 0;
    boost::json::storage_ptr memory_;  // of the document begun
    std::string unescaped_;            // a key or string with escapes, decoded
    boost::json::basic_parser<Handler> parser_;
};

}  // namespace mdadmit::admission
