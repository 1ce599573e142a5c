#include "mdadmit/rules/instance_type.hpp"

#include <algorithm>
#include <boost/json/value.hpp>

#include "mdadmit/rules/json_input.hpp"
#include "quantity_json.hpp"

namespace mdadmit::rules {

namespace {

namespace json = boost::json;

bool positive_at(const json::value& object, std::string_view pointer) {
    const json::value* value = at_pointer(object, pointer);
    return value != nullptr && ((value->is_int64() && value->get_int64() > 0) ||
                                (value->is_uint64() && value->get_uint64() > 0));
}

std::optional<Quantity> quantity_at(const json::value& object, std::string_view pointer) {
    const json::value* value = at_pointer(object, pointer);
    return value == nullptr ? std::nullopt : quantity_of(*value);
}

}  // namespace

bool InstanceType::offers_profile(std::string_view profile) const {
    return std::find(partition_profiles.begin(), partition_profiles.end(), profile) !=
           partition_profiles.end();
}

std::optional<NamedInstanceType> decode_instance_type(const json::value& object) {
    NamedInstanceType out;
    out.name = string_at(object, "/metadata/name");
    if (out.name.empty()) {
        return std::nullopt;
    }
    InstanceType& type = out.type;
    type.manufacturer = string_at(object, "/status/detail/manufacturer");
    const json::value* acceleratable = at_pointer(object, "/spec/acceleratable");
    type.acceleratable =
        acceleratable != nullptr && acceleratable->is_bool() && acceleratable->get_bool();
    type.accelerator_group = string_at(object, "/spec/acceleratorGroup");
    type.logical_slicing = positive_at(object, "/status/detail/slicedDetail/logical/count");
    type.partitioning = positive_at(object, "/status/detail/slicedDetail/physical/count");
    if (const json::value* profiles =
            at_pointer(object, "/status/detail/slicedDetail/physical/profiles");
        profiles != nullptr && profiles->is_array()) {
        for (const auto& profile : profiles->get_array()) {
            if (const auto name = string_at(profile, "/name"); !name.empty()) {
                type.partition_profiles.push_back(name);
            }
        }
    }
    type.capacity = quantity_at(object, "/status/accelerator/capacity");
    return out;
}

}  // namespace mdadmit::rules
