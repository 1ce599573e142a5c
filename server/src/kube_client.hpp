#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "mdadmit/rules/result.hpp"

namespace boost::asio::ssl {
class context;
}

namespace mdadmit::server {

// How to reach the Kubernetes API: in a Pod, from the service account the kubelet mounts.
struct KubeSettings {
    std::string host;  // KUBERNETES_SERVICE_HOST
    unsigned short port = 443;
    std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
    std::string server_name;  // checked against the API server's certificate; default: host
};

enum class KubeMethod { get, post, put, remove };

struct KubeResponse {
    int status = 0;  // HTTP status; 0 when no answer came
    std::string body;
    std::string error;  // why no answer came
};

// What every connection to the API server shares: where it is, the CA it is checked
// against, and the bearer token, read from its file for every request so that a rotated
// token is used as soon as the kubelet writes it.
class KubeApi {
  public:
    static rules::Result<std::shared_ptr<KubeApi>> create(KubeSettings settings);
    ~KubeApi();

    const KubeSettings& settings() const { return settings_; }
    boost::asio::ssl::context& tls() const { return *context_; }
    std::string token() const;

  private:
    KubeApi(KubeSettings settings, std::unique_ptr<boost::asio::ssl::context> context);

    KubeSettings settings_;
    std::unique_ptr<boost::asio::ssl::context> context_;
};

// One keep-alive HTTPS connection to the API server, used by one coroutine at a time on one
// executor. It connects on first use and again after the server closes it, so a caller
// issues requests without minding the connection.
class KubeConnection {
  public:
    KubeConnection(boost::asio::any_io_executor executor, std::shared_ptr<const KubeApi> api);
    ~KubeConnection();
    KubeConnection(const KubeConnection&) = delete;
    KubeConnection& operator=(const KubeConnection&) = delete;

    // A GET answered in full by `deadline`.
    boost::asio::awaitable<KubeResponse> get(std::string path,
                                             std::chrono::steady_clock::time_point deadline);
    // Any request, with a JSON body ("" for none), answered in full by `deadline`. A write
    // is retried on a new connection only when a kept-alive one was found closed before any
    // answer came, as a GET is.
    boost::asio::awaitable<KubeResponse> request(KubeMethod method, std::string path,
                                                 std::string body,
                                                 std::chrono::steady_clock::time_point deadline);

    // Starts a streamed GET (a watch). A status other than 200 comes with the whole body;
    // with 200, the events follow through next_line().
    boost::asio::awaitable<KubeResponse> open_stream(
        std::string path, std::chrono::steady_clock::time_point deadline);
    // The next line of the open stream; nullopt when it ends, fails, or `idle` passes
    // without a byte (the connection is then closed).
    boost::asio::awaitable<std::optional<std::string>> next_line(std::chrono::milliseconds idle);

    // Closes the connection; the next request opens another. Safe from the executor only.
    void close();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace mdadmit::server
