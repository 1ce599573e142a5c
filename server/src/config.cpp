#include "config.hpp"

#include <fstream>
#include <functional>
#include <thread>

#include "mdadmit/rules/arg_stream.hpp"
#include "request_target.hpp"

namespace mdadmit::server {

namespace {

using Setter = std::function<std::optional<std::string>(Config&, const std::string&)>;
using Shower = std::function<std::string(const Config&)>;

// How a setting is read into the Config and written back as text, so that --help and the
// documentation show the defaults of Config{} itself rather than a copy of them.
struct Field {
    Setter set;
    Shower shown;
};

struct Setting {
    std::string_view name;
    std::string_view value_name;
    std::string_view meaning;
    Field field;
    std::string_view when_empty = "none";  // what the setting means when it shows as ""
};

constexpr std::string_view required = "required";

std::string show_address(const ListenAddress& address) {
    return address.host + ":" + std::to_string(address.port);
}

std::string show_duration(std::chrono::milliseconds value) {
    const auto ms = value.count();
    if (ms % 60'000 == 0) {
        return std::to_string(ms / 60'000) + "m";
    }
    if (ms % 1'000 == 0) {
        return std::to_string(ms / 1'000) + "s";
    }
    return std::to_string(ms) + "ms";
}

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

Field address(ListenAddress Config::*field) {
    return {[field](Config& c, const std::string& value) { return set_address(c.*field, value); },
            [field](const Config& c) { return show_address(c.*field); }};
}

Field duration(std::chrono::milliseconds Config::*field) {
    return {[field](Config& c, const std::string& value) -> std::optional<std::string> {
                const auto parsed = parse_go_duration(value);
                if (!parsed || parsed->count() <= 0) {
                    return "expected a positive duration such as 500ms, 10s or 2m, got \"" + value +
                           "\"";
                }
                c.*field = *parsed;
                return std::nullopt;
            },
            [field](const Config& c) { return show_duration(c.*field); }};
}

template <typename T>
Setter set_count(T Config::*field, long long minimum) {
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

template <typename T>
Field count(T Config::*field, long long minimum) {
    return {set_count(field, minimum),
            [field](const Config& c) { return std::to_string(c.*field); }};
}

Field text(std::string Config::*field) {
    return {[field](Config& c, const std::string& value) -> std::optional<std::string> {
                c.*field = value;
                return std::nullopt;
            },
            [field](const Config& c) { return c.*field; }};
}

// One of a fixed set of words; `shown` names the word the Config holds.
Field choice(std::vector<std::string> allowed,
             std::function<void(Config&, const std::string&)> apply, Shower shown) {
    return {[allowed, apply](Config& c, const std::string& value) -> std::optional<std::string> {
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
            },
            std::move(shown)};
}

// A switch spelled as one of two words, `off` (false, the default) or `on`.
Field two_words(bool Config::*field, std::string off, std::string on) {
    return choice(
        {off, on}, [field, on](Config& c, const std::string& v) { c.*field = v == on; },
        [field, off, on](const Config& c) { return c.*field ? on : off; });
}

Field health_address() {
    return {
        [](Config& c, const std::string& v) -> std::optional<std::string> {
            if (v == "off") {
                c.health_listen.reset();
                return std::nullopt;
            }
            ListenAddress address;
            auto problem = set_address(address, v);
            c.health_listen = address;
            return problem;
        },
        [](const Config& c) { return c.health_listen ? show_address(*c.health_listen) : "off"; }};
}

Field kube_api_server() {
    return {
        [](Config& c, const std::string& v) -> std::optional<std::string> {
            ListenAddress address;
            auto problem = set_address(address, v);
            c.kube_host = address.host;
            c.kube_port = address.port;
            return problem;
        },
        [](const Config& c) {
            return c.kube_host.empty() ? std::string() : show_address({c.kube_host, c.kube_port});
        }};
}

const std::vector<Setting>& settings() {
    static const std::vector<Setting> table{
        {"listen", "HOST:PORT", "admission over TLS; port 0 picks a free port",
         address(&Config::listen)},
        {"health-listen", "HOST:PORT|off", "plain HTTP for /healthz, /readyz and /metrics",
         health_address()},
        {"cert-file", "FILE", "serving certificate chain, PEM", text(&Config::cert_file), required},
        {"key-file", "FILE", "private key of the certificate, PEM", text(&Config::key_file),
         required},
        {"client-ca-file", "FILE", "require client certificates signed by these CAs (mTLS)",
         text(&Config::client_ca_file)},
        {"tls-min-version", "1.2|1.3", "lowest TLS version accepted",
         two_words(&Config::tls13_only, "1.2", "1.3")},
        {"threads",
         "N",
         "I/O threads, each with its own listener",
         {set_count(&Config::threads, 0),
          [](const Config& c) { return c.threads == 0 ? "" : std::to_string(c.threads); }},
         "one per core"},
        {"max-body-bytes", "N",
         "largest request body, larger gets 413: two objects of 3 MiB plus the review around them",
         count(&Config::max_body_bytes, 1024)},
        {"max-connections", "N", "open client connections at most; more are closed at accept",
         count(&Config::max_connections, 1)},
        {"handshake-timeout", "DURATION", "the TLS handshake",
         duration(&Config::handshake_timeout)},
        {"header-timeout", "DURATION", "a request's headers, and the first request of a connection",
         duration(&Config::header_timeout)},
        {"body-timeout", "DURATION", "a request's body (the apiserver's ?timeout= may shorten it)",
         duration(&Config::body_timeout)},
        {"idle-timeout", "DURATION", "keep-alive idle time; keep it above the apiserver's 90s",
         duration(&Config::idle_timeout)},
        {"write-timeout", "DURATION", "writing a response", duration(&Config::write_timeout)},
        {"shutdown-delay", "DURATION", "after SIGTERM: not ready but still serving, this long",
         duration(&Config::shutdown_delay)},
        {"drain-timeout", "DURATION", "then at most this long for requests in flight",
         duration(&Config::drain_timeout)},
        {"cert-poll-interval", "DURATION",
         "re-read the certificate files this often as well as on change",
         duration(&Config::cert_poll_interval)},
        {"rules-data", "FILE", "rule data replacing the built-in rules.json",
         text(&Config::rules_data_file), "built in"},
        {"instance-types", "FILE",
         "InstanceType manifests (YAML/JSON) giving each role its platform and pool",
         text(&Config::instance_types_file)},
        {"cluster-files", "PATH",
         "ModelDeployment manifests (file or directory) the mutating path reads instead of the "
         "Kubernetes API",
         text(&Config::cluster_files)},
        {"kube-api-server", "HOST:PORT",
         "the Kubernetes API, read when no --cluster-files are given", kube_api_server(),
         "KUBERNETES_SERVICE_HOST and _PORT"},
        {"kube-token-file", "FILE", "service account token, re-read when it rotates",
         text(&Config::kube_token_file)},
        {"kube-ca-file", "FILE", "CA of the API server", text(&Config::kube_ca_file)},
        {"kube-server-name", "NAME", "name checked in the API server's certificate",
         text(&Config::kube_server_name), "its host"},
        {"kube-watch-timeout", "DURATION",
         "how long the API server keeps one watch of the cluster cache open before it is resumed",
         duration(&Config::kube_watch_timeout)},
        {"audit-interval",
         "DURATION|off",
         "judge every stored ModelDeployment this often with the current rules (metrics "
         "mdadmit_audit_*)",
         {[](Config& c, const std::string& v) -> std::optional<std::string> {
              if (v == "off") {
                  c.audit_interval.reset();
                  return std::nullopt;
              }
              const auto parsed = parse_go_duration(v);
              if (!parsed || parsed->count() <= 0) {
                  return "expected a positive duration such as 30s or 5m, or off, got \"" + v +
                         "\"";
              }
              c.audit_interval = *parsed;
              return std::nullopt;
          },
          [](const Config& c) {
              return c.audit_interval ? show_duration(*c.audit_interval) : std::string("off");
          }}},
        {"encode-platform-unknown",
         "warn|deny",
         "kept for older configurations: the same as --enforce encode-platform-unknown=ACTION",
         {[](Config& c, const std::string& v) -> std::optional<std::string> {
              if (v != "warn" && v != "deny") {
                  return "expected warn or deny, got \"" + v + "\"";
              }
              c.enforcement.entries.emplace_back(
                  "encode-platform-unknown",
                  v == "deny" ? rules::Action::deny : rules::Action::warn);
              return std::nullopt;
          },
          [](const Config&) { return std::string(); }},
         "see --enforce"},
        {"policy-reports", "off|on",
         "write each audit as wgpolicyk8s.io PolicyReports, one per namespace (one replica "
         "writes, by a Lease)",
         two_words(&Config::policy_reports, "off", "on")},
        {"lease-namespace", "NS", "namespace of the Lease that elects the PolicyReport writer",
         text(&Config::lease_namespace)},
        {"leader-identity", "NAME", "this replica's name in that Lease",
         text(&Config::leader_identity), "the host name"},
        {"lease-duration",
         "DURATION",
         "how long the Lease lasts unrenewed; another replica takes over after it",
         {[](Config& c, const std::string& v) -> std::optional<std::string> {
              const auto parsed = parse_go_duration(v);
              if (!parsed || *parsed < std::chrono::seconds(1)) {
                  return "expected a duration of at least 1s, got \"" + v + "\"";
              }
              c.lease_duration = *parsed;
              return std::nullopt;
          },
          [](const Config& c) {
              return c.lease_duration ? show_duration(*c.lease_duration) : std::string();
          }},
         "3 audit intervals"},
        {"mutation-failure-mode", "allow|deny",
         "a Pod whose ModelDeployment cannot be read: admitted unchanged with a warning (allow) "
         "or denied",
         two_words(&Config::deny_unreadable_mutations, "allow", "deny")},
        {"router-container", "NAME", "router Pod container that gets router flags",
         text(&Config::router_container), "the first"},
        {"engine-container", "NAME", "engine Pod container that gets engine flags (else the first)",
         text(&Config::engine_container)},
        {"sidecar-container", "NAME", "decode sidecar container (in containers or initContainers)",
         text(&Config::sidecar_container)},
        {"schema-check", "decoder|full",
         "decoder: type checks of the fields rules read; full: the JSON Schema on every request",
         two_words(&Config::full_schema_check, "decoder", "full")},
        {"enforce",
         "RULE=ACTION,...",
         "staged enforcement: deny, warn or off per rule, or *=ACTION for all (a rule's own "
         "entry wins); repeatable, and flags replace the config file's entries",
         {[](Config& c, const std::string& v) -> std::optional<std::string> {
              auto parsed = rules::parse_enforcement(v, std::move(c.enforcement));
              if (!parsed) {
                  return parsed.error().message;
              }
              c.enforcement = std::move(parsed).value();
              return std::nullopt;
          },
          [](const Config& c) { return rules::to_string(c.enforcement); }},
         "each rule's action in the rules data"},
        {"log-level", "LEVEL", "trace, debug, info, warn or error",
         choice(
             {"trace", "debug", "info", "warn", "error"},
             [](Config& c, const std::string& v) { c.log_level = v; },
             [](const Config& c) { return c.log_level; })},
        {"log-format", "text|json", "log line format; json is one object per line",
         two_words(&Config::log_json, "text", "json")},
    };
    return table;
}

// The default of a setting as --help and the documentation show it.
std::string shown_default(const Setting& setting) {
    const std::string shown = setting.field.shown(Config{});
    return shown.empty() ? std::string(setting.when_empty) : shown;
}

constexpr std::string_view config_meaning = "read settings from FILE first";

std::optional<std::string> apply(Config& config, std::string_view name, const std::string& value) {
    for (const auto& setting : settings()) {
        if (setting.name == name) {
            if (auto problem = setting.field.set(config, value)) {
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

rules::Result<Config> parse_config(const std::vector<std::string>& arguments, Help& help) {
    help = Help::none;
    std::vector<std::pair<std::string, std::string>> flags;
    std::optional<std::string> config_file;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& argument = arguments[i];
        if (argument == "--help" || argument == "-h" || argument == "--help-markdown") {
            help = argument == "--help-markdown" ? Help::markdown : Help::usage;
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
    // Flags win: --enforce on the command line replaces the file's entries rather than
    // adding to them (it is the one setting that accumulates).
    bool enforce_flag_seen = false;
    for (const auto& [name, value] : flags) {
        if ((name == "enforce" || name == "encode-platform-unknown") && !enforce_flag_seen) {
            config.enforcement = {};
            enforce_flag_seen = true;
        }
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
        const std::string shown = shown_default(setting);
        out += left + std::string(setting.meaning) +
               (shown == required ? " (required)" : " (default " + shown + ")") + "\n";
    }
    std::string left = "  --config FILE";
    left.resize(44, ' ');
    out += left + std::string(config_meaning) + "\n";
    return out;
}

namespace {

// A Markdown table cell: a bare | would end the cell.
std::string cell(std::string_view text) {
    std::string out;
    for (const char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    }
    return out;
}

}  // namespace

std::string settings_markdown() {
    std::string out = "| setting | default | meaning |\n|---|---|---|\n";
    for (const auto& setting : settings()) {
        const std::string shown = setting.field.shown(Config{});
        const std::string default_cell =
            shown.empty() ? std::string(setting.when_empty) : "`" + shown + "`";
        out += "| `--" + std::string(setting.name) + " " + cell(setting.value_name) + "` | " +
               cell(default_cell) + " | " + cell(setting.meaning) + " |\n";
    }
    out += "| `--config FILE` | none | " + std::string(config_meaning) + " |\n";
    return out;
}

}  // namespace mdadmit::server
