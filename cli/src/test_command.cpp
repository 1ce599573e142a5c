// mdadmit test: run a suite of cases and report every mismatch with a diff.
#include <iostream>

#include "commands.hpp"
#include "mdadmit/inputs/junit.hpp"
#include "mdadmit/inputs/test_case.hpp"
#include "mdadmit/rules/pod_patch.hpp"

namespace mdadmit::cli {

namespace {

// A mutation case: the patch the webhook would send for the case's Pod.
inputs::CaseOutcome mutation_outcome(const inputs::TestCase& test_case, const rules::RuleData& data,
                                     const rules::InstanceTypes& types) {
    const auto identity = rules::identify_pod(*test_case.pod);
    if (!identity) {
        return {false, "the pod is not a ModelDeployment engine or router Pod (labels)", ""};
    }
    return inputs::compare_patch(
        test_case, rules::mutate_pod(*test_case.pod, *identity, test_case.object, data, &types));
}

// The engine of a case with its own settings: the suite's data with those settings.
rules::Result<rules::Engine> engine_for(const inputs::TestCase& test_case,
                                        const rules::Engine& suite_engine) {
    auto data = rules::with_settings(suite_engine.data(), test_case.settings);
    if (!data) {
        return rules::Error{test_case.label() + ": " + data.error().message};
    }
    return rules::Engine::create(std::move(data).value(), suite_engine.options());
}

// How the suite's parity cases stand against the operator's own verdicts.
struct Parity {
    std::size_t cases = 0;
    std::size_t agree = 0;
    std::size_t differ = 0;  // on purpose, each with its reason
};

}  // namespace

int run_test(const Options& options) {
    auto judging = start_command(options);
    if (!judging) {
        return exit_usage;
    }
    const rules::Engine& engine = judging->engine;
    auto read = inputs::read_inputs(options.inputs);
    if (!read) {
        std::cerr << "mdadmit: " << read.error().message << "\n";
        return exit_usage;
    }
    const std::vector<inputs::Document>& documents = read.value();
    // InstanceType documents anywhere in the suite are the suite's cluster.
    rules::InstanceTypes& suite_types = judging->instance_types;
    inputs::collect_instance_types(documents, suite_types);
    auto cases = inputs::parse_cases(documents);
    if (!cases) {
        std::cerr << "mdadmit: " << cases.error().message << "\n";
        return exit_usage;
    }
    if (cases.value().empty()) {
        std::cerr << "mdadmit: no test cases (documents with a `case` field) in the inputs\n";
        return exit_usage;
    }
    const bool colour = options.output == OutputFormat::text && use_colour();
    std::vector<inputs::JunitCase> report;
    std::size_t failed = 0;
    Parity parity;
    for (const auto& test_case : cases.value()) {
        rules::InstanceTypes types = suite_types;
        for (const auto& [name, type] : test_case.instance_types) {
            types[name] = type;
        }
        std::optional<rules::Engine> with_settings;
        if (!test_case.settings.empty()) {
            auto built = engine_for(test_case, engine);
            if (!built) {
                std::cerr << "mdadmit: " << built.error().message << "\n";
                return exit_usage;
            }
            with_settings = std::move(built).value();
        }
        const rules::Engine& case_engine = with_settings ? *with_settings : engine;
        const rules::Review review{test_case.object,
                                   test_case.old_object ? &*test_case.old_object : nullptr, &types,
                                   test_case.operation};
        const auto outcome = test_case.pod
                                 ? mutation_outcome(test_case, case_engine.data(), types)
                                 : inputs::compare(test_case, case_engine.evaluate(review));
        failed += outcome.passed ? 0 : 1;
        if (test_case.operator_verdict) {
            ++parity.cases;
            const bool differs = !test_case.operator_verdict->differs.empty();
            parity.differ += outcome.passed && differs ? 1 : 0;
            parity.agree += outcome.passed && !differs ? 1 : 0;
        }
        report.push_back(
            {test_case.source, test_case.name, outcome.passed ? "" : outcome.reason, outcome.diff});
        if (options.output != OutputFormat::text) {
            continue;
        }
        if (outcome.passed) {
            std::cout << (colour ? "\033[32mPASS\033[0m " : "PASS ") << test_case.label() << "\n";
        } else {
            std::cout << (colour ? "\033[31mFAIL\033[0m " : "FAIL ") << test_case.label() << ": "
                      << outcome.reason << "\n";
            std::cout << "  expected (-) against actual (+):\n";
            for (std::size_t at = 0; at < outcome.diff.size();) {
                const std::size_t end = outcome.diff.find('\n', at);
                std::cout << "    " << outcome.diff.substr(at, end - at) << "\n";
                at = end + 1;
            }
        }
    }
    if (options.output == OutputFormat::junit) {
        std::cout << inputs::junit_report("mdadmit test", report);
    } else {
        if (parity.cases > 0) {
            std::cout << "operator parity: " << parity.cases << " cases, " << parity.agree
                      << " agree with the operator, " << parity.differ
                      << " differ on purpose (operator.differs says why), "
                      << parity.cases - parity.agree - parity.differ << " failed\n";
        }
        std::cout << cases.value().size() - failed << " passed, " << failed << " failed\n";
    }
    return failed == 0 ? exit_admitted : exit_denied;
}

}  // namespace mdadmit::cli
