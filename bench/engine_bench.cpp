// Micro benchmarks of the admission hot path's pure part: parsing a ~4.7 KB AdmissionReview,
// the structural check, the whole rule engine, and a review's whole answer (admission: bytes
// in, bytes out) for several shapes of review, with the heap allocations each one makes, back to
// back and on emptied caches.
// nlohmann_json is the reference the choice of Boost.JSON is measured against.
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <variant>
#include <vector>

#include "mdadmit/admission/admission.hpp"
#include "mdadmit/rules/engine.hpp"
#include "mdadmit/rules/instance_type.hpp"
#include "mdadmit/rules/json_input.hpp"

// Every heap allocation of the process is counted, so that a benchmark can report how many
// one review makes (the target: none once warmed up).
namespace {
std::atomic<long long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* memory = std::malloc(size == 0 ? 1 : size)) {
        return memory;
    }
    throw std::bad_alloc();
}
void operator delete(void* memory) noexcept {
    std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
    std::free(memory);
}

namespace {

using namespace mdadmit;

std::string data_file(const char* name) {
    std::ifstream in(std::string(MDADMIT_BENCH_DATA) + "/" + name);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

const std::string& review_text() {
    static const std::string text = data_file("review-allowed.json");
    return text;
}

// The typical object's CREATE by kubectl apply, as kube-apiserver sends it: compact JSON, the
// last applied form in its annotation, and the managedFields of a client-side apply.
const std::string& applied_review() {
    static const std::string text = data_file("review-applied.json");
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

// The DOM in a reused arena, as the admission path builds it.
void parse_boost_json_arena(benchmark::State& state) {
    std::vector<unsigned char> arena(64 * 1024);
    for (auto _ : state) {
        boost::json::monotonic_resource memory(arena.data(), arena.size());
        benchmark::DoNotOptimize(boost::json::parse(review_text(), &memory));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(review_text().size()));
}
BENCHMARK(parse_boost_json_arena);

// Boost.JSON's tokenizer with a handler that keeps nothing: the floor of any reader built on
// it that takes only the fields a verdict needs instead of a DOM of the whole review.
struct IgnoringHandler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);
    using ec = boost::system::error_code;
    using text = boost::json::string_view;
    bool on_document_begin(ec&) { return true; }
    bool on_document_end(ec&) { return true; }
    bool on_object_begin(ec&) { return true; }
    bool on_object_end(std::size_t, ec&) { return true; }
    bool on_array_begin(ec&) { return true; }
    bool on_array_end(std::size_t, ec&) { return true; }
    bool on_key_part(text, std::size_t, ec&) { return true; }
    bool on_key(text, std::size_t, ec&) { return true; }
    bool on_string_part(text, std::size_t, ec&) { return true; }
    bool on_string(text, std::size_t, ec&) { return true; }
    bool on_number_part(text, ec&) { return true; }
    bool on_int64(std::int64_t, text, ec&) { return true; }
    bool on_uint64(std::uint64_t, text, ec&) { return true; }
    bool on_double(double, text, ec&) { return true; }
    bool on_bool(bool, ec&) { return true; }
    bool on_null(ec&) { return true; }
    bool on_comment_part(text, ec&) { return true; }
    bool on_comment(text, ec&) { return true; }
};

void tokenize_boost_json(benchmark::State& state) {
    for (auto _ : state) {
        boost::json::basic_parser<IgnoringHandler> parser({});
        boost::system::error_code ec;
        benchmark::DoNotOptimize(
            parser.write_some(false, review_text().data(), review_text().size(), ec));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(review_text().size()));
}
BENCHMARK(tokenize_boost_json);

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

// A CREATE of `object` for /validate, in a bare envelope: the request's kind and operation.
std::string review_of(boost::json::value object) {
    return boost::json::serialize(boost::json::object{
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "bench"},
          {"kind",
           {{"group", "worker.gpustack.ai"}, {"version", "v1"}, {"kind", "ModelDeployment"}}},
          {"operation", "CREATE"},
          {"namespace", "bench"},
          {"object", std::move(object)}}}});
}

// A CREATE's object scaled: its Decode role from 4 replicas to 6, as `kubectl scale` or a
// re-apply sends it, in the envelope kube-apiserver gives an UPDATE (the CREATE's, with its
// operation, options and the object before).
std::string update_of(const std::string& create) {
    boost::json::value review = rules::parse_json(create).value();
    boost::json::object& request = review.at("request").as_object();
    request["operation"] = "UPDATE";
    request["options"] = {{"apiVersion", "meta.k8s.io/v1"},
                          {"kind", "UpdateOptions"},
                          {"fieldManager", "kubectl-client-side-apply"}};
    request["oldObject"] = request.at("object");
    request.at("object").at("spec").at("roles").at(2).as_object()["replicas"] = 6;
    return boost::json::serialize(review);
}

const std::string& update_review() {
    static const std::string text = update_of(review_text());
    return text;
}

const std::string& applied_update_review() {
    static const std::string text = update_of(applied_review());
    return text;
}

// Ten roles of 100 flags each (`--flag-N value`): the engine's argument scans at scale.
const std::string& ten_roles_review() {
    static const std::string text = [] {
        boost::json::array roles;
        for (int r = 0; r < 10; ++r) {
            boost::json::array args;
            for (int f = 0; f < 100; ++f) {
                args.push_back(boost::json::string("--flag-" + std::to_string(f)));
                args.push_back(boost::json::string(std::to_string(f)));
            }
            roles.push_back(boost::json::object{{"name", "role-" + std::to_string(r)},
                                                {"replicas", 1},
                                                {"extraArgs", std::move(args)}});
        }
        return review_of(
            boost::json::object{{"apiVersion", "worker.gpustack.ai/v1"},
                                {"kind", "ModelDeployment"},
                                {"metadata", {{"name", "wide"}, {"namespace", "bench"}}},
                                {"spec",
                                 {{"model", {{"name", "m"}}},
                                  {"engine", {{"name", "vLLM"}, {"version", "0.11.0"}}},
                                  {"router", {{"name", "vllm-router"}}},
                                  {"roles", std::move(roles)}}}});
    }();
    return text;
}

// The typical review's object with 3 MiB more, the size of the largest objects etcd keeps: the
// cost that grows with the body. In an annotation (where kubectl keeps an applied object's last
// form), the review parser reads it and builds no value for it; in the status, it is built.
template <typename Member>
std::string review_with_three_mib_in(Member member) {
    boost::json::value object = review_object();
    member(object.as_object())["bench/padding"] = std::string(3 * 1024 * 1024, 'x');
    return review_of(std::move(object));
}

const std::string& three_mib_annotation_review() {
    static const std::string text =
        review_with_three_mib_in([](boost::json::object& object) -> boost::json::object& {
            return object["metadata"].as_object()["annotations"].as_object();
        });
    return text;
}

const std::string& three_mib_status_review() {
    static const std::string text =
        review_with_three_mib_in([](boost::json::object& object) -> boost::json::object& {
            return object["status"].as_object();
        });
    return text;
}

// The cluster's InstanceTypes as the server knows them from its watch: the typical review's
// roles run on `h100`, an NVIDIA pool. Without them the review draws a warning (the Encode
// role's platform is unknown).
const rules::InstanceTypes* cluster_instance_types() {
    static const rules::InstanceTypes types = [] {
        rules::InstanceType h100;
        h100.manufacturer = "NVIDIA";
        h100.acceleratable = true;
        return rules::InstanceTypes{{"h100", h100}};
    }();
    return &types;
}

// What a review finds in the caches: what the review before it left (keep-alive: one
// connection's requests back to back), or little of it, as after a TLS handshake (a new
// connection per request): the handshake's code and data, OpenSSL's and the kernel's, push the
// review's own out of the core's caches.
enum class Caches { warm, emptied };

// Pushes the review's code and data out of this core's own caches: a write to every line of
// 8 MiB, several times a core's second-level cache (1.25 MiB on the machine of the
// twenty-fifth run), so that the review reads them again from the shared last level, as after
// a handshake or the kernel's network path (bench/RESULTS.md).
void empty_core_caches() {
    constexpr std::size_t bytes = 8 * 1024 * 1024;
    constexpr std::size_t line = 64;
    static std::vector<unsigned char> sweep(bytes);
    for (std::size_t i = 0; i < sweep.size(); i += line) {
        sweep[i] = static_cast<unsigned char>(sweep[i] + 1);
    }
    benchmark::ClobberMemory();
}

// One review's whole answer, as the server's request threads compute it: parse, judge,
// write the AdmissionReview response, handing each outcome back as the next one's memory as
// a connection does. Reports allocations per review after warm-up. With Caches::emptied, only
// the review is timed, each on emptied caches (the benchmark's time is the review's alone).
void admit(benchmark::State& state, const std::string& (*review)(),
           const rules::InstanceTypes* instance_types, Caches caches = Caches::warm) {
    static const auto engine = rules::Engine::with_embedded_data(
        {rules::StructureCheck::decoder_only, rules::Enforcement{}});
    static const admission::Admission admission(engine);
    const std::string& body = review();
    const auto deadline = admission::Clock::now() + std::chrono::hours(1);
    admission::Outcome storage;
    const auto answer = [&] {
        storage = std::get<admission::Outcome>(admission.admit(admission::AdmissionPath::validate,
                                                               body, instance_types, deadline,
                                                               std::move(storage)));
        benchmark::DoNotOptimize(storage.body.data());
    };
    for (int warm = 0; warm < 3; ++warm) {
        if (caches == Caches::emptied) {
            empty_core_caches();  // its buffer, allocated once, before the counting
        }
        answer();
    }
    const long long before = allocations.load(std::memory_order_relaxed);
    for (auto _ : state) {
        if (caches == Caches::emptied) {
            empty_core_caches();
            const auto start = std::chrono::steady_clock::now();
            answer();
            state.SetIterationTime(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        } else {
            answer();
        }
    }
    state.counters["allocs/review"] =
        static_cast<double>(allocations.load(std::memory_order_relaxed) - before) /
        static_cast<double>(state.iterations());
    state.counters["findings"] = static_cast<double>(storage.counts.findings.size());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}
BENCHMARK_CAPTURE(admit, typical_4_7_kb, &review_text, nullptr);
BENCHMARK_CAPTURE(admit, typical_on_a_cluster, &review_text, cluster_instance_types());
BENCHMARK_CAPTURE(admit, update_on_a_cluster, &update_review, cluster_instance_types());
BENCHMARK_CAPTURE(admit, applied_on_a_cluster, &applied_review, cluster_instance_types());
BENCHMARK_CAPTURE(admit, applied_update_on_a_cluster, &applied_update_review,
                  cluster_instance_types());
BENCHMARK_CAPTURE(admit, ten_roles_100_flags, &ten_roles_review, nullptr);
BENCHMARK_CAPTURE(admit, three_mib_annotation, &three_mib_annotation_review, nullptr);
BENCHMARK_CAPTURE(admit, three_mib_status, &three_mib_status_review, nullptr);
// The review of a new connection per request, on caches a handshake has emptied.
BENCHMARK_CAPTURE(admit, applied_on_emptied_caches, &applied_review, cluster_instance_types(),
                  Caches::emptied)
    ->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
