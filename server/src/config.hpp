#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mdadmit/rules/enforcement.hpp"
#include "mdadmit/rules/finding.hpp"
#include "mdadmit/rules/result.hpp"

namespace mdadmit::server {

struct ListenAddress {
    std::string host;
    unsigned short port = 0;
};

// Every setting of the webhook, with its default and the reason for it. The same names are
// flags (--name=value or --name value) and lines of the optional --config file (name = value).
struct Config {
    ListenAddress listen{"0.0.0.0", 8443};                          // admission, TLS only
    std::optional<ListenAddress> health_listen{{"0.0.0.0", 8080}};  // plain HTTP; "off" disables
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;  // set: clients must present a certificate it signed (mTLS)
    bool tls13_only = false;     // TLS 1.2 is the minimum unless this asks for 1.3
    unsigned threads = 0;        // 0: one per core
    std::size_t max_body_bytes =
        7 * 1024 * 1024;  // two objects of 3 MiB plus the review around them
    std::size_t max_connections = 1024;
    std::chrono::milliseconds handshake_timeout{10'000};
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{30'000};
    // Above kube-apiserver's 90 s reuse of idle connections, so it never writes to a
    // connection the server has just closed (users would see EOF).
    std::chrono::milliseconds idle_timeout{120'000};
    std::chrono::milliseconds write_timeout{10'000};
    std::chrono::milliseconds shutdown_delay{
        5'000};  // ready=false, still serving, while endpoints update
    std::chrono::milliseconds drain_timeout{20'000};
    std::chrono::milliseconds cert_poll_interval{10'000};
    std::string rules_data_file;      // empty: the data built into the binary
    std::string instance_types_file;  // YAML/JSON InstanceTypes; empty: platforms unknown
    std::string cluster_files;        // ModelDeployment manifests the mutating path reads
    // The Kubernetes API, read when no --cluster-files are given; empty host: from the
    // environment the kubelet sets (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT).
    std::string kube_host;
    unsigned short kube_port = 443;
    std::string kube_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    std::string kube_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
    std::string kube_server_name;  // empty: the host
    // ModelDeployments and InstanceTypes are listed, then watched; the API server ends a watch
    // after this long and the cache resumes it, so no connection hangs on unseen.
    std::chrono::milliseconds kube_watch_timeout{300'000};
    // Every stored ModelDeployment judged this often (metrics mdadmit_audit_*); nullopt: off.
    std::optional<std::chrono::milliseconds> audit_interval{std::chrono::minutes(5)};
    // One PolicyReport per namespace from each audit, written by the replica holding the
    // Lease `mdadmit-policy-reports` in lease_namespace.
    bool policy_reports = false;
    std::string lease_namespace = "mdadmit-system";
    std::string leader_identity;  // empty: the host name (a Pod's name)
    // How long the writer's Lease lasts unrenewed: another replica takes over after it.
    std::optional<std::chrono::milliseconds> lease_duration;  // unset: 3 audit intervals
    bool deny_unreadable_mutations = false;
    std::string router_container;  // empty: the router Pod's first container
    std::string engine_container = "engine";
    std::string sidecar_container = "routing-sidecar";
    bool full_schema_check = false;
    rules::Enforcement enforcement;  // over the data file's catalogue (--enforce)
    std::string log_level = "info";
    bool log_json = false;

    unsigned worker_threads() const;
};

// What the command line asked to print instead of serving.
enum class Help { none, usage, markdown };  // --help / -h, --help-markdown

// Parses flags and, with --config FILE, the file first (flags win). An Error names the
// setting and the value. `help` says whether --help or --help-markdown was given.
rules::Result<Config> parse_config(const std::vector<std::string>& arguments, Help& help);

// --help: every setting with its meaning and the default of Config{}.
std::string usage_text();

// The same table in Markdown, as docs/server.md carries it (mdadmit-webhook --help-markdown).
std::string settings_markdown();

}  // namespace mdadmit::server
