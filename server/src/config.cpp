#include "config.hpp"

#include <fstream>
#include <functional>
#include <thread>

#include "mdadmit/rules/arg_stream.hpp"
#include "request_target.hpp"

namespace mdadmit::server {

namespace {

using Setter = std::function<std::optional<std::string>(Config&, const std::string&)>;

struct Setting {
    std::string_view name;
    std::string_view value_name;
    std::string_view help;
    Setter set;
};

std::optional<std::string> set_address(ListenAddress& out, const std::string& value) {
    const std::size_t colon = value.rfind(':');
    const auto port = colon == std::string::npos
                          ? std::nullopt
                          : rules::parse_integer(std::string_view(value).substr(colon + 1));
    if (!port || *port < 0 || *port > 65535) {
        return "expected HOST:PORT (port 0 picks a free one), got \"" + value + "\"";
    }
    std::string host = value.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    out = {host.empty() ? "0.0.0.0" : host, static_cast<unsigned short>(*port)};
    return std::nullopt;
}

Setter duration(std::chrono::milliseconds Config::*field) {
    return [field](Config& c, const std::string& value) -> std::optional<std::string> {
        const auto parsed = parse_go_duration(value);
        if (!parsed || parsed->count() <= 0) {
            return "expected a positive duration such as 500ms, 10s or 2m, got \"" + value + "\"";
        }
        c.*field = *parsed;
        return std::nullopt;
    };
}

template <typename T>
Setter count(T Config::*field, long long minimum) {
    return [field, minimum](Config& c, const std::string& value) -> std::optional<std::string> {
        const auto parsed = rules::parse_integer(value);
        if (!parsed || *parsed < minimum) {
            return "expected an integer of at least " + std::to_string(minimum) + ", got \"" +
                   value + "\"";
        }
        c.*field = static_cast<T>(*parsed);
        return std::nullopt;
    };
}

Setter text(std::string Config::*field) {
    return [field](Config& c, const std::string& value) -> std::optional<std::string> {
        c.*field = value;
        return std::nullopt;
    };
}

Setter choice(std::vector<std::string> allowed,
              std::function<void(Config&, const std::string&)> apply) {
    return [allowed, apply](Config& c, const std::string& value) -> std::optional<std::string> {
        for (const auto& candidate : allowed) {
            if (candidate == value) {
                apply(c, value);
                return std::nullopt;
            }
        }
        std::string list;
        for (const auto& candidate : allowed) {
            list += (list.empty() ? "" : ", ") + candidate;
        }
        return "expected one of " + list + ", got \"" + value + "\"";
    };
}

const std::vector<Setting>& settings() {
    static const std::vector<Setting> table{
        {"listen", "HOST:PORT", "admission over TLS (default 0.0.0.0:8443)",
         [](Config& c, const std::string& v) { return set_address(c.listen, v); }},
        {"health-listen", "HOST:PORT|off",
         "plain HTTP for /healthz, /readyz, /metrics (default 0.0.0.0:8080)",
         [](Config& c, const std::string& v) -> std::optional<std::string> {
             if (v == "off") {
                 c.health_listen.reset();
                 return std::nullopt;
             }
             ListenAddress address;
             auto problem = set_address(address, v);
             c.health_listen = address;
             return problem;
         }},
        {"cert-file", "FILE", "serving certificate chain, PEM (required)",
         text(&Config::cert_file)},
        {"key-file", "FILE", "private key of the certificate, PEM (required)",
         text(&Config::key_file)},
        {"client-ca-file", "FILE",
         "require client certificates signed by these CAs (mTLS; default off)",
         text(&Config::client_ca_file)},
        {"tls-min-version", "1.2|1.3", "lowest TLS version accepted (default 1.2)",
         choice({"1.2", "1.3"},
                [](Config& c, const std::string& v) { c.tls13_only = v == "1.3"; })},
        {"threads", "N", "I/O threads, each with its own listener (default: one per core)",
         count(&Config::threads, 0)},
        {"max-body-bytes", "N", "largest request body; larger gets 413 (default 7340032)",
         count(&Config::max_body_bytes, 1024)},
        {"max-connections", "N",
         "open client connections at most; more are closed at accept (default 1024)",
         count(&Config::max_connections, 1)},
        {"handshake-timeout", "DURATION", "TLS handshake (default 10s)",
         duration(&Config::handshake_timeout)},
        {"header-timeout", "DURATION", "reading a request's headers once it starts (default 10s)",
         duration(&Config::header_timeout)},
        {"body-timeout", "DURATION",
         "reading a request's body (default 30s; ?timeout= may shorten it)",
         duration(&Config::body_timeout)},
        {"idle-timeout", "DURATION",
         "keep-alive idle time; keep above the apiserver's 90s (default 120s)",
         duration(&Config::idle_timeout)},
        {"write-timeout", "DURATION", "writing a response (default 10s)",
         duration(&Config::write_timeout)},
        {"shutdown-delay", "DURATION",
         "after SIGTERM: not ready, still serving, for this long (default 5s)",
         duration(&Config::shutdown_delay)},
        {"drain-timeout", "DURATION", "then at most this long for in-flight requests (default 20s)",
         duration(&Config::drain_timeout)},
        {"cert-poll-interval", "DURATION",
         "re-read the certificate files this often as well as on change (default 10s)",
         duration(&Config::cert_poll_interval)},
        {"rules-data", "FILE", "rule data replacing the built-in rules.json",
         text(&Config::rules_data_file)},
        {"instance-types", "FILE",
         "InstanceType manifests (YAML/JSON) giving each role's platform and pool",
         text(&Config::instance_types_file)},
        {"cluster-files", "PATH",
         "ModelDeployment manifests (file or directory) the mutating path reads",
         text(&Config::cluster_files)},
        {"kube-api-server", "HOST:PORT",
         "the Kubernetes API (default: KUBERNETES_SERVICE_HOST and _PORT)",
         [](Config& c, const std::string& v) -> std::optional<std::string> {
             ListenAddress address;
             auto problem = set_address(address, v);
             c.kube_host = address.host;
             c.kube_port = address.port;
             return problem;
         }},
        {"kube-token-file", "FILE",
         "service account token, re-read on every request (default: the mounted one)",
         text(&Config::kube_token_file)},
        {"kube-ca-file", "FILE", "CA of the API server (default: the mounted one)",
         text(&Config::kube_ca_file)},
        {"kube-server-name", "NAME",
         "name checked in the API server's certificate (default: its host)",
         text(&Config::kube_server_name)},
        {"kube-watch-timeout", "DURATION",
         "how long the API server keeps one watch of the cluster cache open (default 5m)",
         duration(&Config::kube_watch_timeout)},
        {"mutation-failure-mode", "allow|deny",
         "a Pod whose ModelDeployment cannot be read: admit unchanged with a warning (default) or "
         "deny",
         choice(
             {"allow", "deny"},
             [](Config& c, const std::string& v) { c.deny_unreadable_mutations = v == "deny"; })},
        {"router-container", "NAME",
         "router Pod container that gets router flags (default: the first)",
         text(&Config::router_container)},
        {"engine-container", "NAME",
         "engine Pod container that gets engine flags (default engine, else the first)",
         text(&Config::engine_container)},
        {"sidecar-container", "NAME", "decode sidecar container (default routing-sidecar)",
         text(&Config::sidecar_container)},
        {"schema-check", "decoder|full",
         "decoder: type checks of the fields rules read (default); full: the JSON Schema",
         choice({"decoder", "full"},
                [](Config& c, const std::string& v) { c.full_schema_check = v == "full"; })},
        {"encode-platform-unknown", "warn|deny",
         "severity when an Encode role's platform is unknown (default warn)",
         choice({"warn", "deny"},
                [](Config& c, const std::string& v) {
                    c.encode_platform_unknown =
                        v == "deny" ? rules::Severity::deny : rules::Severity::warn;
                })},
        {"log-level", "LEVEL", "trace, debug, info, warn or error (default info)",
         choice({"trace", "debug", "info", "warn", "error"},
                [](Config& c, const std::string& v) { c.log_level = v; })},
        {"log-format", "text|json", "log line format (default text)",
         choice({"text", "json"},
                [](Config& c, const std::string& v) { c.log_json = v == "json"; })},
    };
    return table;
}

std::optional<std::string> apply(Config& config, std::string_view name, const std::string& value) {
    for (const auto& setting : settings()) {
        if (setting.name == name) {
            if (auto problem = setting.set(config, value)) {
                return "--" + std::string(name) + ": " + *problem;
            }
            return std::nullopt;
        }
    }
    return "unknown setting --" + std::string(name) + " (see --help)";
}

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::optional<std::string> apply_file(Config& config, const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return "--config: cannot open " + path;
    }
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = trim(line);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto equals = line.find('=');
        if (equals == std::string::npos) {
            return path + ":" + std::to_string(number) + ": expected name = value";
        }
        if (auto problem =
                apply(config, trim(line.substr(0, equals)), trim(line.substr(equals + 1)))) {
            return path + ":" + std::to_string(number) + ": " + *problem;
        }
    }
    return std::nullopt;
}

}  // namespace

unsigned Config::worker_threads() const {
    return threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

rules::Result<Config> parse_config(const std::vector<std::string>& arguments, bool& help) {
    help = false;
    std::vector<std::pair<std::string, std::string>> flags;
    std::optional<std::string> config_file;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& argument = arguments[i];
        if (argument == "--help" || argument == "-h") {
            help = true;
            return Config{};
        }
        if (argument.rfind("--", 0) != 0) {
            return rules::Error{"unexpected argument \"" + argument +
                                "\" (settings are --name=value)"};
        }
        std::string name = argument.substr(2);
        std::string value;
        if (const auto equals = name.find('='); equals != std::string::npos) {
            value = name.substr(equals + 1);
            name.resize(equals);
        } else if (i + 1 < arguments.size()) {
            value = arguments[++i];
        } else {
            return rules::Error{"--" + name + ": missing value"};
        }
        if (name == "config") {
            config_file = value;
        } else {
            flags.emplace_back(std::move(name), std::move(value));
        }
    }
    Config config;
    if (config_file) {
        if (auto problem = apply_file(config, *config_file)) {
            return rules::Error{*problem};
        }
    }
    for (const auto& [name, value] : flags) {
        if (auto problem = apply(config, name, value)) {
            return rules::Error{*problem};
        }
    }
    if (config.cert_file.empty() || config.key_file.empty()) {
        return rules::Error{
            "--cert-file and --key-file are required: admission is served over TLS only"};
    }
    return config;
}

std::string usage_text() {
    std::string out =
        "usage: mdadmit-webhook --cert-file FILE --key-file FILE [--name=value ...]\n"
        "       mdadmit-webhook --config FILE [--name=value ...]\n\n"
        "The ModelDeployment admission webhook: POST /validate and /mutate over TLS;\n"
        "GET /healthz, /readyz, /metrics on both ports. Settings (also as `name = value`\n"
        "lines of the --config file; flags win):\n\n";
    for (const auto& setting : settings()) {
        std::string left =
            "  --" + std::string(setting.name) + " " + std::string(setting.value_name);
        left.resize(std::max<std::size_t>(left.size() + 1, 44), ' ');
        out += left + std::string(setting.help) + "\n";
    }
    out += "  --config FILE                             read settings from FILE first\n";
    return out;
}

}  // namespace mdadmit::server
