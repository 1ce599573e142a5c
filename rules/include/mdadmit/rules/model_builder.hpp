#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "mdadmit/rules/model.hpp"

namespace mdadmit::rules {

// Builds the typed model from a ModelDeployment's JSON as a parser reads it, one event at a
// time, without a DOM: what decode_model_deployment reads from a DOM, for an object it finds
// nothing wrong with. It gives up at the first thing the decoder would report or read in a way
// events cannot follow (a wrong type, an unknown engine or role kind, a list beyond the limits,
// a member it reads given twice, whose last copy a DOM keeps); the caller then decodes a DOM,
// which says what is wrong. So an object either builds to what the decoder makes of it, or
// does not build.
//
// The events are one JSON value's, in document order, with whole keys and strings (as the
// review's tokenizer gives them). A text the model keeps is a view of `source` when it lies
// there (the request body, unescaped), else a copy in `memory`, where its lists are too: the
// model outlives the parser's buffers, not `memory` and `source`.
class ModelBuilder {
  public:
    explicit ModelBuilder(Memory memory, std::string_view source = {});

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(std::string_view text);
    void string(std::string_view text);
    void integer(std::int64_t value);
    void unsigned_integer(std::uint64_t value);
    void number(double value);
    void boolean(bool value);
    void null();

    // After a key: whether the member's value is read. A caller may pass over the value of a
    // member that is not (its events would change nothing), as long as none of them comes.
    bool reads_value() const {
        return !gave_up_ && ignored_ == 0 && (field_ >= 0 || source_key_.has_value());
    }

    // The model, once the value has ended; nullopt when it gave up or the value is incomplete.
    std::optional<ModelDeployment> finish();
    bool gave_up() const { return gave_up_; }

  private:
    // Where the value about to begin goes: an object's member, or an array's element.
    enum class Frame : unsigned char {
        root,
        metadata,
        spec,
        model,
        artifact_ref,
        engine,
        kv_cache,
        pool_ref,
        kv_transfer,
        router,
        router_args,
        roles,
        role,
        resources,
        ports,
        port,
        command,
        role_args,
        env,
        env_var,
        volumes,
        volume,
        host_path,
        topology,
        elastic_ep,
    };
    enum class Kind : unsigned char { object, array, string, integer, number, boolean, null };
    struct Value {
        Kind kind = Kind::null;
        std::string_view text;
        std::int64_t integer = 0;
        std::optional<std::uint64_t> big;  // an integer beyond int64
        bool boolean = false;
    };
    struct Open {
        Frame frame;
        std::uint32_t seen = 0;    // the fields of an object met so far
        std::size_t elements = 0;  // of an array
    };
    // The deepest frame: spec.roles[i].additionalVolumes[k].hostPath.
    static constexpr std::size_t max_frames = 8;

    static int field_number(Frame frame, std::string_view key);
    static bool is_list(Frame frame);
    void value(const Value& v);
    // The index of the next entry of `list`; none, having given up, past the `limit` entries
    // the decoder reads of such a list.
    std::optional<std::size_t> next_index(Open& list, std::size_t limit);
    void close();
    void open(Frame frame);
    // Whether `v` is of `kind`: null is absent (false); any other kind gives up (false).
    bool is(const Value& v, Kind kind);
    // Opens `frame` for a value of `kind` (an object or an array) and says so; as is().
    bool opens(const Value& v, Kind kind, Frame frame);
    void member(Frame frame, int field, const Value& v);
    void metadata_member(int field, const Value& v);
    void spec_member(int field, const Value& v);
    void engine_member(int field, const Value& v);
    void router_member(int field, const Value& v);
    void role_member(int field, const Value& v);
    void resources_member(int field, const Value& v);
    void volume_member(int field, const Value& v);
    void element(Open& list, const Value& v);
    // An element of the innermost list of strings that is no string (null, or a wrong type).
    void string_element(const Value& v);
    // The list a frame of strings fills (arguments, a command), or null.
    List<std::string_view>* strings_of(Frame frame);
    void give_up() { gave_up_ = true; }
    std::string_view keep(std::string_view text);

    // Typed reads of a value: false (and given up) for a wrong type; null leaves `out` absent
    // (read_text: "").
    bool read_string(const Value& v, std::optional<std::string_view>& out);
    bool read_text(const Value& v, std::string_view& out);
    bool read_integer(const Value& v, std::optional<std::int64_t>& out);
    bool read_quantity(const Value& v, std::optional<Quantity>& out);
    bool read_boolean(const Value& v, bool& out);

    Memory memory_;
    std::string_view source_;
    ModelDeployment model_;
    std::array<Open, max_frames> frames_{};
    std::size_t open_ = 0;                       // frames open
    List<std::string_view>* strings_ = nullptr;  // the innermost frame's, if a list of strings
    std::size_t ignored_ = 0;                    // containers open inside a value nothing reads
    int field_ = -1;  // the member about to be read, by its frame's field number
    // The current volume's members of other names than its fields, to tell a repeated one.
    List<std::string_view> volume_keys_;
    // The key of the volume member about to be read, when it names no mount field: a source,
    // if its value is an object.
    std::optional<std::string_view> source_key_;
    bool started_ = false;
    bool ended_ = false;
    bool gave_up_ = false;
};

}  // namespace mdadmit::rules
