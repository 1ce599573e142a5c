#include "mdadmit/inputs/judging.hpp"

#include "mdadmit/inputs/documents.hpp"

namespace mdadmit::inputs {

rules::Result<Judging> load_judging(const JudgingOptions& options) {
    rules::RuleData data = rules::embedded_rule_data();
    if (!options.rules_data_file.empty()) {
        auto loaded = rules::load_rule_data_file(options.rules_data_file);
        if (!loaded) {
            return loaded.error();
        }
        data = std::move(loaded).value();
    }
    auto engine =
        rules::Engine::create(std::move(data), {options.structure_check, options.enforcement});
    if (!engine) {
        return engine.error();
    }
    auto documents = read_inputs(options.instance_type_files);
    if (!documents) {
        return documents.error();
    }
    rules::InstanceTypes types;
    collect_instance_types(documents.value(), types);
    return Judging{std::move(engine).value(), std::move(types)};
}

}  // namespace mdadmit::inputs
