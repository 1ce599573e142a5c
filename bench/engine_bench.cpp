// Micro benchmarks of the admission hot path's pure part: parsing a ~4.7 KB AdmissionReview,
// the structural check, and the whole rule engine. nlohmann_json is the reference the
// choice of Boost.JSON is measured against.
#include <benchmark/benchmark.h>

#include <boost/json.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/json_input.hpp"

namespace {

using namespace mdadmit;

const std::string& review_text() {
    static const std::string text = [] {
        std::ifstream in(std::string(MDADMIT_BENCH_DATA) + "/review-allowed.json");
        std::ostringstream out;
        out << in.rdbuf();
        return out.str();
    }();
    return text;
}

const boost::json::value& review_object() {
    static const boost::json::value object =
        rules::parse_json(review_text()).value().at("request").at("object");
    return object;
}

void parse_nlohmann(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(nlohmann::json::parse(review_text()));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(review_text().size()));
}
BENCHMARK(parse_nlohmann);

void parse_boost_json(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(rules::parse_json(review_text()));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(review_text().size()));
}
BENCHMARK(parse_boost_json);

void schema_check_valijson(benchmark::State& state) {
    static const auto check = rules::SchemaCheck::embedded();
    for (auto _ : state) {
        benchmark::DoNotOptimize(check.check(review_object()));
    }
}
BENCHMARK(schema_check_valijson);

void evaluate(benchmark::State& state, rules::StructureCheck structure) {
    rules::EngineOptions options;
    options.structure_check = structure;
    const auto engine = rules::Engine::with_embedded_data(options);
    rules::InstanceTypes instance_types;
    instance_types["h100"].manufacturer = "NVIDIA";
    for (auto _ : state) {
        benchmark::DoNotOptimize(engine.evaluate({review_object(), nullptr, &instance_types}));
    }
}
BENCHMARK_CAPTURE(evaluate, full_schema, rules::StructureCheck::full);
BENCHMARK_CAPTURE(evaluate, decoder_only, rules::StructureCheck::decoder_only);

void parse_and_evaluate(benchmark::State& state) {
    rules::EngineOptions options;
    options.structure_check = rules::StructureCheck::decoder_only;
    const auto engine = rules::Engine::with_embedded_data(options);
    for (auto _ : state) {
        auto review = rules::parse_json(review_text());
        benchmark::DoNotOptimize(engine.evaluate({review.value().at("request").at("object")}));
    }
}
BENCHMARK(parse_and_evaluate);

}  // namespace

BENCHMARK_MAIN();
