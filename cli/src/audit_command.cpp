// mdadmit audit: judge the ModelDeployments a cluster already stores, as the webhook would
// judge their next change, so that a new rule or a replaced rules.json can be rolled out
// knowing what it would refuse.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "commands.hpp"
#include "mdadmit/admission/audit.hpp"
#include "mdadmit/inputs/documents.hpp"
#include "report.hpp"

namespace mdadmit::cli {

namespace {

// The kubectl command line that lists the ModelDeployments to audit.
std::vector<std::string> kubectl_command(const Options& options) {
    std::vector<std::string> command{options.kubectl, "get", "modeldeployments.worker.gpustack.ai",
                                     "--output", "json"};
    if (options.all_namespaces) {
        command.push_back("--all-namespaces");
    } else if (!options.namespace_name.empty()) {
        command.insert(command.end(), {"--namespace", options.namespace_name});
    }
    if (!options.context.empty()) {
        command.insert(command.end(), {"--context", options.context});
    }
    if (!options.kubeconfig.empty()) {
        command.insert(command.end(), {"--kubeconfig", options.kubeconfig});
    }
    return command;
}

// Runs `command` and returns what it wrote to stdout; its stderr goes to ours. kubectl reads
// the kubeconfig (contexts, tokens, client certificates, exec plugins) so this does not.
rules::Result<std::string> output_of(std::vector<std::string> command) {
    int pipe_ends[2];
    if (::pipe2(pipe_ends, O_CLOEXEC) != 0) {
        return rules::Error{std::string("cannot create a pipe: ") + std::strerror(errno)};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& argument : command) {
        argv.push_back(argument.data());
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_ends[1]);
    if (spawned != 0) {
        ::close(pipe_ends[0]);
        return rules::Error{"cannot run " + command[0] + ": " + std::strerror(spawned) +
                            " (--kubectl names another, or give the objects as files)"};
    }
    std::string output;
    std::string read_error;
    char chunk[65536];
    for (ssize_t n; (n = ::read(pipe_ends[0], chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            read_error = std::strerror(errno);
            break;
        }
        output.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(pipe_ends[0]);
    int status = 0;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    std::string line;
    for (const auto& argument : command) {
        line += (line.empty() ? "" : " ") + argument;
    }
    if (reaped < 0) {
        return rules::Error{line + ": " + std::strerror(errno)};
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return rules::Error{line + " failed (exit " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")"};
    }
    if (!read_error.empty()) {
        return rules::Error{"reading the output of " + line + ": " + read_error};
    }
    return output;
}

rules::Result<std::vector<inputs::Document>> stored_objects(const Options& options) {
    if (!options.inputs.empty()) {
        if (options.all_namespaces || !options.namespace_name.empty() || !options.context.empty() ||
            !options.kubeconfig.empty()) {
            return rules::Error{
                "-A, -n, --context and --kubeconfig choose what kubectl reads; with files "
                "given, they would be ignored"};
        }
        return inputs::read_inputs(options.inputs);
    }
    auto listed = output_of(kubectl_command(options));
    if (!listed) {
        return listed.error();
    }
    return inputs::parse_documents(listed.value(), "kubectl get modeldeployments");
}

}  // namespace

int run_audit(const Options& options) {
    // Stored objects passed the CRD's schema: the webhook's own structural check, so that the
    // audit and the server's gauges agree.
    auto judging = make_judging(options, false);
    if (!judging) {
        std::cerr << "mdadmit: " << judging.error().message << "\n";
        return exit_usage;
    }
    auto documents = stored_objects(options);
    if (!documents) {
        std::cerr << "mdadmit: " << documents.error().message << "\n";
        return exit_usage;
    }
    rules::InstanceTypes& instance_types = judging.value().instance_types;
    inputs::collect_instance_types(documents.value(), instance_types);
    std::vector<Judged> judged;
    for (const auto& document : documents.value()) {
        if (inputs::kind_of(document.value) != "ModelDeployment") {
            continue;
        }
        judged.push_back(
            {&document, object_name(document.value),
             admission::audit_object(judging.value().engine, document.value, &instance_types)});
    }
    if (judged.empty()) {
        std::cerr << "mdadmit: no ModelDeployment to audit\n";
    }
    return report(judged, judging.value().engine, options, "mdadmit audit");
}

}  // namespace mdadmit::cli
