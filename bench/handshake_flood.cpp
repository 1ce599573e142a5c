// A TLS handshake flood against the webhook binary, while a normal client keeps sending
// reviews. Each flooding socket sends a canned ClientHello, reads the server's whole first
// flight (key exchange and certificate signature done) and hangs up: the cheapest way for a
// client to make the server do a handshake's public-key work, repeated as fast as the server
// answers. The normal client is kube-apiserver: one open connection with a review every few
// milliseconds, and now and then a review on a new connection. The same client runs first
// without the flood, as the reference.
//
//   mdadmit_handshake_flood --webhook build/server/mdadmit-webhook [--sockets 500]
//                           [--seconds 10] [--max-delay-ms 100] [--webhook-threads 1]
//                           [--split-cpus on|off]
//
// Exit 0 when every review was answered 200 and none on the open connection took longer than
// --max-delay-ms during the flood.
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_process.hpp"
#include "https_client.hpp"

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using mdadmit::bench::percentile;

struct Options {
    std::string webhook;
    int sockets = 500;
    int seconds = 10;
    int max_delay_ms = 100;
    int webhook_threads = 1;
    bool split_cpus = true;
};

Options parse(int argc, char** argv) {
    namespace bench = mdadmit::bench;
    Options options;
    bench::parse_flags(argc, argv,
                       {{"--webhook", bench::text_flag(options.webhook)},
                        {"--sockets", bench::integer_flag(options.sockets)},
                        {"--seconds", bench::integer_flag(options.seconds)},
                        {"--max-delay-ms", bench::integer_flag(options.max_delay_ms)},
                        {"--webhook-threads", bench::integer_flag(options.webhook_threads)},
                        {"--split-cpus", bench::on_off_flag(options.split_cpus)}});
    if (options.webhook.empty()) {
        throw std::runtime_error(
            "usage: mdadmit_handshake_flood --webhook PATH [--sockets N] [--seconds N] "
            "[--max-delay-ms N] [--webhook-threads N] [--split-cpus on|off]");
    }
    return options;
}

// The first flight of an OpenSSL client (a TLS 1.3 ClientHello with a key share), taken from
// a client that writes into memory. Replayed byte for byte, it costs the flooder nothing.
std::string client_hello() {
    const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(
        SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
    const std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), &SSL_free);
    BIO* const incoming = BIO_new(BIO_s_mem());
    BIO* const outgoing = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl.get(), incoming, outgoing);
    SSL_set_tlsext_host_name(ssl.get(), "localhost");
    SSL_set_connect_state(ssl.get());
    SSL_do_handshake(ssl.get());
    char* data = nullptr;
    const long size = BIO_get_mem_data(outgoing, &data);
    if (size <= 0) {
        throw std::runtime_error("OpenSSL wrote no ClientHello");
    }
    return {data, static_cast<std::size_t>(size)};
}

struct Flood {
    std::string hello;
    // The server's answer to one ClientHello, as first measured. Its ECDSA signature varies by
    // a few bytes, so a flooding socket reads all but the last record's worth (the Finished
    // message, sent after the signature) before it hangs up.
    std::size_t flight_bytes = 0;
    std::size_t enough_bytes() const { return flight_bytes - 16; }
    asio::ip::tcp::endpoint server;
    std::atomic<bool> stopping{false};
    long long handshakes = 0;  // first flights read in full
    long long failures = 0;    // connections refused, reset, or closed early
};

// Reads the server's first flight once, until it falls silent (it then waits for our
// Finished), to learn how many bytes a flooding socket must read before it hangs up.
std::size_t measure_flight(const Flood& flood) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect(flood.server);
    asio::write(socket, asio::buffer(flood.hello));
    std::size_t total = 0;
    char buffer[16384];
    for (;;) {
        pollfd readable{socket.native_handle(), POLLIN, 0};
        if (::poll(&readable, 1, 300) <= 0) {
            return total;
        }
        boost::system::error_code ec;
        const std::size_t n = socket.read_some(asio::buffer(buffer), ec);
        if (ec) {
            return total;
        }
        total += n;
    }
}

asio::awaitable<void> flooding_socket(Flood& flood) {
    const auto executor = co_await asio::this_coro::executor;
    std::vector<char> flight(flood.flight_bytes);
    const std::size_t enough = flood.enough_bytes();
    while (!flood.stopping.load(std::memory_order_relaxed)) {
        asio::ip::tcp::socket socket(executor);
        boost::system::error_code ec;
        co_await socket.async_connect(flood.server, asio::redirect_error(asio::use_awaitable, ec));
        if (!ec) {
            co_await asio::async_write(socket, asio::buffer(flood.hello),
                                       asio::redirect_error(asio::use_awaitable, ec));
        }
        if (!ec) {
            co_await asio::async_read(socket, asio::buffer(flight), asio::transfer_at_least(enough),
                                      asio::redirect_error(asio::use_awaitable, ec));
        }
        if (ec) {
            ++flood.failures;
            asio::steady_timer pause(executor, std::chrono::milliseconds(10));
            co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        } else {
            ++flood.handshakes;
        }
    }
}

struct Latencies {
    std::vector<double> open_connection_ms;  // reviews on the one kept-open connection
    std::vector<double> new_connection_ms;   // a connection, a handshake and a review
    int not_ok = 0;                          // answers other than 200, or no answer
};

// The normal client for `duration`: a review on its open connection every 5 ms, and every
// tenth time a review on a new connection.
Latencies normal_client(mdadmit::test::HttpsClient& open, unsigned short port,
                        const mdadmit::test::ClientOptions& options, const std::string& review,
                        std::chrono::seconds duration) {
    Latencies latencies;
    const auto until = Clock::now() + duration;
    for (int i = 0; Clock::now() < until; ++i) {
        auto started = Clock::now();
        const auto answer = open.request("POST", "/validate", review);
        latencies.open_connection_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - started).count());
        latencies.not_ok += answer.status == 200 ? 0 : 1;
        if (i % 10 == 0) {
            started = Clock::now();
            const int status = mdadmit::test::post_once(port, options, "/validate", review);
            latencies.new_connection_ms.push_back(
                std::chrono::duration<double, std::milli>(Clock::now() - started).count());
            latencies.not_ok += status == 200 ? 0 : 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return latencies;
}

void print(const char* phase, const Latencies& latencies) {
    const auto line = [&](const char* what, const std::vector<double>& values) {
        std::printf("%-9s %-16s %6zu reviews  p50 %7.2f  p99 %7.2f  max %7.2f ms\n", phase, what,
                    values.size(), percentile(values, 0.50), percentile(values, 0.99),
                    percentile(values, 1.0));
    };
    line("open connection", latencies.open_connection_ms);
    line("new connection", latencies.new_connection_ms);
}

std::string admitted_review() {
    return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
           R"("uid":"flood","kind":{"group":"worker.gpustack.ai","version":"v1",)"
           R"("kind":"ModelDeployment"},"operation":"CREATE","object":{)"
           R"("apiVersion":"worker.gpustack.ai/v1","kind":"ModelDeployment",)"
           R"("metadata":{"name":"chat","namespace":"default"},"spec":{"model":{"name":"m"},)"
           R"("engine":{"name":"vLLM","version":"0.11.0"},"router":{"name":"vllm-router"},)"
           R"("roles":[{"name":"serve","replicas":2}]}}}})";
}

int run(const Options& options) {
    const mdadmit::bench::Workspace workspace("handshake-flood");
    const std::optional<int> webhook_cpu =
        options.split_cpus ? mdadmit::bench::keep_one_cpu_apart() : std::nullopt;
    const unsigned short port = workspace.port();
    const unsigned short health = workspace.health_port();
    const mdadmit::bench::ChildProcess webhook(
        workspace.webhook_command(
            options.webhook,
            {"--threads", std::to_string(options.webhook_threads), "--log-level", "error"}),
        webhook_cpu);
    const bool ready =
        mdadmit::bench::wait_until_ready(health, std::chrono::seconds(30)).has_value();
    if (!ready) {
        std::printf("the webhook did not become ready within 30 s\n");
        return 1;
    }

    mdadmit::test::ClientOptions client_options;
    client_options.ca_file = workspace.ca_file();
    mdadmit::test::HttpsClient open(port, client_options);
    if (!open.connect()) {
        throw std::runtime_error("the normal client cannot connect: " + open.last_error());
    }
    const std::string review = admitted_review();
    const std::chrono::seconds phase(options.seconds);
    const Latencies quiet = normal_client(open, port, client_options, review, phase);

    Flood flood;
    flood.hello = client_hello();
    flood.server = {asio::ip::make_address("127.0.0.1"), port};
    flood.flight_bytes = measure_flight(flood);
    if (flood.flight_bytes < 100) {
        throw std::runtime_error("the server did not answer a replayed ClientHello");
    }
    asio::io_context flood_io;
    for (int s = 0; s < options.sockets; ++s) {
        asio::co_spawn(flood_io, flooding_socket(flood), asio::detached);
    }
    std::thread flooder([&] { flood_io.run(); });
    const auto flood_started = Clock::now();
    const Latencies flooded = normal_client(open, port, client_options, review, phase);
    flood.stopping = true;
    const double flood_seconds =
        std::chrono::duration<double>(Clock::now() - flood_started).count();
    flooder.join();
    const std::string metrics = mdadmit::test::plain_get(health, "/metrics").second;

    std::printf("webhook: %s (%d thread%s, CPU %s)\n", options.webhook.c_str(),
                options.webhook_threads, options.webhook_threads == 1 ? "" : "s",
                webhook_cpu ? std::to_string(*webhook_cpu).c_str() : "shared");
    std::printf("flood: %d sockets, ClientHello %zu bytes, server flight %zu bytes\n",
                options.sockets, flood.hello.size(), flood.flight_bytes);
    std::printf("flood: %lld first flights in %.1f s (%.0f handshakes/s), %lld failed\n",
                flood.handshakes, flood_seconds,
                static_cast<double>(flood.handshakes) / flood_seconds, flood.failures);
    print("quiet", quiet);
    print("flooded", flooded);
    const double worst = percentile(flooded.open_connection_ms, 1.0);
    std::printf(
        "open connection, flooded / quiet: p50 %.1fx, max %.1fx\n",
        percentile(flooded.open_connection_ms, 0.5) / percentile(quiet.open_connection_ms, 0.5),
        worst / percentile(quiet.open_connection_ms, 1.0));
    std::printf("answers other than 200: quiet %d, flooded %d\n", quiet.not_ok, flooded.not_ok);
    const bool met = quiet.not_ok == 0 && flooded.not_ok == 0 && worst <= options.max_delay_ms &&
                     flood.handshakes > 0 &&
                     metrics.find("mdadmit_panics_total 0\n") != std::string::npos;
    std::printf("target (every review answered, open connection max <= %d ms): %s\n",
                options.max_delay_ms, met ? "met" : "NOT met");
    return met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mdadmit_handshake_flood: %s\n", e.what());
        return 2;
    }
}
