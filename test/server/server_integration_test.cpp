// The real server over real TLS on loopback: routes, keep-alive, certificate reloads,
// shutdown with requests in flight, and clients that misbehave.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "server_fixture.hpp"

namespace mdadmit::test {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;

TEST(ServerOverTls, EveryRouteAndErrorPath) {
    ServerFixture fixture([](server::Config& c) { c.max_body_bytes = 64 * 1024; });
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    EXPECT_EQ(client.negotiated_alpn(), "");

    const auto denied =
        client.request("POST", "/validate?timeout=10s", validate_review(denied_object));
    EXPECT_EQ(denied.status, 200);
    const json::value denial = json::parse(denied.body);
    EXPECT_EQ(denial.at("response").at("allowed"), false);
    EXPECT_EQ(denial.at("response").at("status").at("details").at("causes").at(0).at("field"),
              "spec.router.extraArgs[0]");

    const auto beta = client.request(
        "POST", "/validate/", validate_review(admitted_object, "u2", "admission.k8s.io/v1beta1"));
    const json::value allowed = json::parse(beta.body);
    EXPECT_EQ(allowed.at("apiVersion"), "admission.k8s.io/v1beta1");
    EXPECT_EQ(allowed.at("response").at("uid"), "u2");
    EXPECT_EQ(allowed.at("response").at("allowed"), true);

    EXPECT_EQ(client.request("POST", "/mutate?timeout=2s", validate_review(admitted_object)).status,
              200);
    const auto wrong_method = client.request("GET", "/validate");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.allow, "POST");
    EXPECT_EQ(client.request("POST", "/validate", "{}", "text/plain").status, 415);
    EXPECT_EQ(client.request("POST", "/validate", "{\"kind\": 1}").status, 400);
    EXPECT_EQ(client.request("POST", "/other", "{}").status, 404);
    EXPECT_EQ(client.request("GET", "/healthz").status, 200);
    EXPECT_EQ(client.request("GET", "/readyz").status, 200);
    const auto metrics = client.request("GET", "/metrics");
    EXPECT_NE(metrics.body.find("mdadmit_certificate_expiry_timestamp_seconds "),
              std::string::npos);
    // Everything above went over one connection.
    EXPECT_NE(metrics.body.find("mdadmit_open_connections 1\n"), std::string::npos) << metrics.body;

    const auto too_large = client.request("POST", "/validate", std::string(70 * 1024, ' '));
    EXPECT_EQ(too_large.status, 413);
    EXPECT_FALSE(too_large.keep_alive);

    EXPECT_EQ(plain_get(fixture.health_port(), "/healthz"),
              (std::pair<int, std::string>{200, "ok\n"}));
    EXPECT_EQ(plain_get(fixture.health_port(), "/readyz").first, 200);
    EXPECT_EQ(plain_get(fixture.health_port(), "/validate").first, 404);
}

// The server's end of the loopback connection whose client end is `client`: a descriptor of
// this process (the server runs in it) bound to `server_port` and connected to the client's
// port, found within 5 s.
std::optional<int> server_end_of(const asio::ip::tcp::socket& client, unsigned short server_port) {
    const unsigned short client_port = client.local_endpoint().port();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
        for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
            const int fd = std::stoi(entry.path().filename().string());
            sockaddr_in local{};
            sockaddr_in peer{};
            socklen_t local_length = sizeof local;
            socklen_t peer_length = sizeof peer;
            if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0 &&
                ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0 &&
                local.sin_family == AF_INET && ntohs(local.sin_port) == server_port &&
                ntohs(peer.sin_port) == client_port) {
                return fd;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < until);
    return std::nullopt;
}

// An answer of several TLS records must not wait for the client's delayed ACK between them.
TEST(ServerOverTls, AcceptedConnectionsSendWithoutNaglesDelay) {
    ServerFixture fixture;
    asio::io_context io;
    asio::ip::tcp::socket client(io);
    client.connect({asio::ip::make_address("127.0.0.1"), fixture.port()});
    const std::optional<int> server_end = server_end_of(client, fixture.port());
    ASSERT_TRUE(server_end.has_value()) << "the server did not accept the connection";
    int no_delay = 0;
    socklen_t length = sizeof no_delay;
    ASSERT_EQ(::getsockopt(*server_end, IPPROTO_TCP, TCP_NODELAY, &no_delay, &length), 0);
    EXPECT_NE(no_delay, 0);
}

// A connection writes each answer into the memory of the one before: denials and admissions
// alternate without one showing in the next.
TEST(ServerOverTls, KeepAliveServesManyRequestsOnOneConnection) {
    ServerFixture fixture;
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect());
    for (int i = 0; i < 20; ++i) {
        const bool deny = i % 3 == 1;
        const std::string uid = "u" + std::to_string(i);
        const auto response = client.request(
            "POST", "/validate", validate_review(deny ? denied_object : admitted_object, uid));
        ASSERT_EQ(response.status, 200) << client.last_error();
        EXPECT_TRUE(response.keep_alive);
        const json::value answer = json::parse(response.body).at("response");
        EXPECT_EQ(answer.at("uid"), uid.c_str());
        EXPECT_EQ(answer.at("allowed"), !deny);
        EXPECT_EQ(answer.as_object().contains("status"), deny) << response.body;
    }
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_open_connections 1\n"));
}

// Requests that arrive together are each answered in order, from what was already read; a
// malformed one is answered 400 and closed.
TEST(ServerOverTls, PipelinedRequestsAreAnsweredInOrderAMalformedOneIsRefusedAndClosed) {
    ServerFixture fixture;
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    const auto post = [](const std::string& body) {
        return "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    client.write_raw(post(validate_review(admitted_object, "first")) +
                     post(validate_review(admitted_object, "second")) +
                     "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    for (const std::string uid : {"first", "second"}) {
        const auto answer = client.read_response();
        ASSERT_EQ(answer.status, 200) << client.last_error();
        EXPECT_EQ(json::parse(answer.body).at("response").at("uid"), uid.c_str());
    }
    EXPECT_EQ(client.read_response().body, "ok\n");

    HttpsClient garbage(fixture.port(), fixture.client_options());
    ASSERT_TRUE(garbage.connect()) << garbage.last_error();
    garbage.write_raw("POST /validate HTTP/1.1\r\nHost x\r\n\r\n");
    const auto malformed = garbage.read_response();
    EXPECT_EQ(malformed.status, 400);
    EXPECT_NE(malformed.body.find("malformed HTTP request"), std::string::npos) << malformed.body;
    EXPECT_FALSE(malformed.keep_alive);

    // Over TLS, a client that leaves without close_notify cannot be answered (OpenSSL writes
    // nothing after that failure): the connection is closed, and others are still served.
    HttpsClient cut(fixture.port(), fixture.client_options());
    ASSERT_TRUE(cut.connect()) << cut.last_error();
    cut.write_raw("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Le");
    cut.close_write();
    EXPECT_TRUE(cut.server_closes_within(std::chrono::seconds(2)));
    EXPECT_EQ(client.request("GET", "/healthz").status, 200);
}

// Requests arriving together on several connections of one thread are all judged before their
// answers are written: each connection still gets its own answers, in order, and every
// connection stays open for more.
TEST(ServerOverTls, RequestsArrivingTogetherOnSeveralConnectionsEachGetTheirOwnAnswers) {
    ServerFixture fixture;
    const auto post = [](const std::string& body) {
        return "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    std::vector<std::unique_ptr<HttpsClient>> clients;
    for (int c = 0; c < 6; ++c) {
        clients.push_back(std::make_unique<HttpsClient>(fixture.port(), fixture.client_options()));
        ASSERT_TRUE(clients.back()->connect()) << clients.back()->last_error();
    }
    const auto uid = [](int c, int r) { return "c" + std::to_string(c) + "r" + std::to_string(r); };
    for (int round = 0; round < 3; ++round) {
        for (int c = 0; c < 6; ++c) {
            const bool deny = c % 2 == 1;
            const std::string object = deny ? denied_object : admitted_object;
            clients[c]->write_raw(post(validate_review(object, uid(c, 2 * round))) +
                                  post(validate_review(object, uid(c, 2 * round + 1))));
        }
        for (int c = 0; c < 6; ++c) {
            for (int r = 2 * round; r < 2 * round + 2; ++r) {
                const auto response = clients[c]->read_response();
                ASSERT_EQ(response.status, 200) << clients[c]->last_error();
                EXPECT_TRUE(response.keep_alive);
                const json::value answer = json::parse(response.body).at("response");
                EXPECT_EQ(answer.at("uid"), uid(c, r).c_str());
                EXPECT_EQ(answer.at("allowed"), c % 2 == 0);
            }
        }
    }
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_open_connections 6\n"));
}

// A request's header fields live in 2 KiB of the connection's own memory, and on the heap past
// it up to the 16 KiB limit: small and large headers alternate on one connection, each read
// whole, and headers over the limit are answered 431 and closed. The server reads 4 KiB at a
// time and the parser takes whole fields as they come, so the limit holds for the whole
// header, not for what one read left unparsed.
TEST(ServerOverTls, HeadersOfEverySizeUpToTheLimitAreReadAndLargerOnesRefused) {
    ServerFixture fixture;
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();
    const auto post = [](const std::string& uid, std::size_t padding_bytes) {
        std::string padding;
        for (int field = 0; padding.size() < padding_bytes; ++field) {
            padding += "X-Padding-" + std::to_string(field) + ": " + std::string(100, 'p') + "\r\n";
        }
        const std::string body = validate_review(admitted_object, uid);
        return "POST /validate HTTP/1.1\r\nHost: x\r\n" + padding +
               "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body;
    };
    for (const std::size_t padding : {0, 12 * 1024, 100, 3 * 1024, 0}) {
        const std::string uid = "padded-" + std::to_string(padding);
        client.write_raw(post(uid, padding));
        const auto answer = client.read_response();
        ASSERT_EQ(answer.status, 200) << padding << " bytes of headers: " << client.last_error();
        EXPECT_EQ(json::parse(answer.body).at("response").at("uid"), uid.c_str());
        EXPECT_TRUE(answer.keep_alive);
    }
    client.write_raw(post("over", 17 * 1024));
    const auto refused = client.read_response();
    EXPECT_EQ(refused.status, 431);
    EXPECT_NE(refused.body.find("request headers too large"), std::string::npos) << refused.body;
    EXPECT_FALSE(refused.keep_alive);

    // One field longer than the limit, which no read holds whole.
    HttpsClient one_field(fixture.port(), fixture.client_options());
    ASSERT_TRUE(one_field.connect()) << one_field.last_error();
    one_field.write_raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(17 * 1024, 'l') + "\r\n\r\n");
    EXPECT_EQ(one_field.read_response().status, 431);
}

// Bodies of many TLS records each way: a 2 MiB review in, a denial of many findings out, on
// one kept-alive connection.
TEST(ServerOverTls, BodiesSpanningManyTlsRecordsBothWays) {
    ServerFixture fixture;
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect()) << client.last_error();

    json::value big = json::parse(admitted_object);
    big.as_object()["metadata"].as_object()["annotations"] = {
        {"example.com/notes", std::string(2 * 1024 * 1024, 'x')}};
    const auto admitted =
        client.request("POST", "/validate", validate_review(json::serialize(big)));
    ASSERT_EQ(admitted.status, 200) << client.last_error();
    EXPECT_EQ(json::parse(admitted.body).at("response").at("allowed"), true);

    json::value many = json::parse(admitted_object);
    json::array args;
    for (int i = 0; i < 300; ++i) {
        args.emplace_back("--kv-transfer-config={}");
    }
    many.at_pointer("/spec/roles/0").as_object()["extraArgs"] = args;
    const auto denied = client.request("POST", "/validate", validate_review(json::serialize(many)));
    ASSERT_EQ(denied.status, 200) << client.last_error();
    EXPECT_GT(denied.body.size(), 64u * 1024);
    const json::value denial = json::parse(denied.body);
    EXPECT_EQ(denial.at("response").at("status").at("details").at("causes").as_array().size(),
              300u);
    EXPECT_TRUE(denied.keep_alive);
}

TEST(CertificateReload, ASecretVolumeSwapIsPickedUpWithoutAFailedRequest) {
    ServerFixture fixture;
    {
        HttpsClient first(fixture.port(), fixture.client_options());
        ASSERT_TRUE(first.connect());
        EXPECT_EQ(first.peer_common_name(), "server-1");
    }
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::atomic<int> answered{0};
    std::thread load([&] {
        while (!stop) {
            if (post_once(fixture.port(), fixture.client_options(), "/validate",
                          validate_review(admitted_object)) == 200) {
                ++answered;
            } else {
                ++failures;
            }
        }
    });
    // A connection opened before the swap keeps working after it.
    HttpsClient in_flight(fixture.port(), fixture.client_options());
    ASSERT_TRUE(in_flight.connect());
    fixture.swap_certificate(fixture.ca().issue("server-2"));
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_certificate_reloads_total 1\n"));
    HttpsClient after(fixture.port(), fixture.client_options());
    ASSERT_TRUE(after.connect());
    EXPECT_EQ(after.peer_common_name(), "server-2");
    EXPECT_EQ(in_flight.request("POST", "/validate", validate_review(admitted_object)).status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
    load.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(answered.load(), 0);
}

TEST(CertificateReload, ABrokenCertificateIsRefusedAndTheOldOneKeepsServing) {
    ServerFixture fixture;
    const PemPair other = TestCa("another CA").issue("mismatched");
    fixture.swap_certificate({fixture.ca().issue("server-2").certificate, other.key});
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_certificate_reload_errors_total 1\n"));
    HttpsClient client(fixture.port(), fixture.client_options());
    ASSERT_TRUE(client.connect());
    EXPECT_EQ(client.peer_common_name(), "server-1");
    fixture.swap_certificate({"not a certificate", "not a key"});
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_certificate_reload_errors_total 2\n"));
    EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate",
                        validate_review(admitted_object)),
              200);
}

TEST(Shutdown, InFlightRequestsAreAnsweredIdleConnectionsClosedAndNewOnesRefused) {
    ServerFixture fixture;
    HttpsClient idle(fixture.port(), fixture.client_options());
    ASSERT_TRUE(idle.connect());
    ASSERT_EQ(idle.request("GET", "/healthz").status, 200);

    HttpsClient in_flight(fixture.port(), fixture.client_options());
    ASSERT_TRUE(in_flight.connect());
    const std::string body = validate_review(admitted_object);
    const std::string head =
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n";
    in_flight.write_raw(head + body.substr(0, 10));

    fixture.server().begin_shutdown();
    EXPECT_EQ(plain_get(fixture.health_port(), "/readyz"),
              (std::pair<int, std::string>{503, "shutting down\n"}));
    // During the shutdown delay the server still serves new connections.
    EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate", body), 200);

    EXPECT_TRUE(idle.server_closes_within(std::chrono::seconds(3)));
    EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate", body), -1);

    in_flight.write_raw(body.substr(10));
    const auto answer = in_flight.read_response();
    EXPECT_EQ(answer.status, 200) << in_flight.last_error();
    EXPECT_FALSE(answer.keep_alive);
    EXPECT_TRUE(fixture.server().wait());
}

TEST(SlowClients, TricklingHeadersAreCutOffWhileOthersAreServed) {
    ServerFixture fixture(
        [](server::Config& c) { c.header_timeout = std::chrono::milliseconds(600); });
    HttpsClient slow(fixture.port(), fixture.client_options());
    ASSERT_TRUE(slow.connect());
    std::atomic<bool> slow_closed{false};
    std::thread trickle([&] {
        const std::string head = "POST /validate HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
        for (std::size_t i = 0; i < head.size() + 40; ++i) {
            try {
                slow.write_raw(i < head.size() ? head.substr(i, 1) : "a");
            } catch (const std::exception&) {
                slow_closed = true;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    for (int i = 0; i < 10; ++i) {
        const auto started = std::chrono::steady_clock::now();
        EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate",
                            validate_review(admitted_object)),
                  200);
        EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500));
    }
    trickle.join();
    EXPECT_TRUE(slow_closed || slow.server_closes_within(std::chrono::seconds(2)));
}

// Opens a TCP connection to the TLS port and sends `bytes` (maybe none); true when the
// server closes it within `timeout`.
bool raw_connection_closed(unsigned short port, const std::string& bytes,
                           std::chrono::milliseconds timeout) {
    asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    if (!bytes.empty()) {
        stream.write_some(asio::buffer(bytes));
    }
    stream.expires_after(timeout);
    char buffer[512];
    boost::system::error_code ec;
    for (;;) {
        stream.read_some(asio::buffer(buffer), ec);
        if (ec) {
            return ec != boost::beast::error::timeout;
        }
    }
}

TEST(BrokenTls, PlainHttpGarbageAndSilenceAreClosedAndCounted) {
    ServerFixture fixture(
        [](server::Config& c) { c.handshake_timeout = std::chrono::milliseconds(300); });
    EXPECT_TRUE(raw_connection_closed(fixture.port(), "GET /validate HTTP/1.1\r\nHost: x\r\n\r\n",
                                      std::chrono::seconds(3)));
    EXPECT_TRUE(
        raw_connection_closed(fixture.port(), std::string(300, '\x16'), std::chrono::seconds(3)));
    EXPECT_TRUE(raw_connection_closed(fixture.port(), "", std::chrono::seconds(3)));
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_tls_handshake_failures_total 3\n"));
    EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate",
                        validate_review(admitted_object)),
              200);
}

TEST(TlsPolicy, OldVersionsAndNonAeadCiphersAreRefusedAndAlpnIsHttp11) {
    ServerFixture fixture;
    ClientOptions old = fixture.client_options();
    old.max_tls_version = TLS1_1_VERSION;
    EXPECT_FALSE(HttpsClient(fixture.port(), old).connect());
    ClientOptions cbc = fixture.client_options();
    cbc.max_tls_version = TLS1_2_VERSION;
    cbc.cipher_list = "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA";
    EXPECT_FALSE(HttpsClient(fixture.port(), cbc).connect());
    ClientOptions tls12 = fixture.client_options();
    tls12.max_tls_version = TLS1_2_VERSION;
    EXPECT_TRUE(HttpsClient(fixture.port(), tls12).connect());
    ClientOptions alpn = fixture.client_options();
    alpn.alpn = std::string("\x02h2\x08http/1.1", 12);
    HttpsClient negotiated(fixture.port(), alpn);
    ASSERT_TRUE(negotiated.connect());
    EXPECT_EQ(negotiated.negotiated_alpn(), "http/1.1");
}

TEST(TlsPolicy, Tls13CanBeTheMinimum) {
    ServerFixture fixture([](server::Config& c) { c.tls13_only = true; });
    ClientOptions tls12 = fixture.client_options();
    tls12.max_tls_version = TLS1_2_VERSION;
    EXPECT_FALSE(HttpsClient(fixture.port(), tls12).connect());
    EXPECT_TRUE(HttpsClient(fixture.port(), fixture.client_options()).connect());
}

// TLS 1.3 gets AES-128-GCM with SHA-256 whatever the client's order, as kube-apiserver asks
// for it (the key schedule's hash has CPU instructions where SHA-384 has none), unless the
// client puts ChaCha20 first (a CPU without AES instructions); AES-256 when it is all offered.
TEST(TlsPolicy, Tls13SuiteIsAes128UnlessTheClientPutsChaChaFirst) {
    ServerFixture fixture;
    const auto negotiated = [&](const std::string& offered) {
        ClientOptions options = fixture.client_options();
        options.min_tls_version = TLS1_3_VERSION;
        options.ciphersuites = offered;
        HttpsClient client(fixture.port(), options);
        EXPECT_TRUE(client.connect()) << offered << ": " << client.last_error();
        return client.negotiated_cipher();
    };
    EXPECT_EQ(negotiated("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                         "TLS_AES_128_GCM_SHA256"),
              "TLS_AES_128_GCM_SHA256");
    EXPECT_EQ(negotiated("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"),
              "TLS_CHACHA20_POLY1305_SHA256");
    EXPECT_EQ(negotiated("TLS_AES_256_GCM_SHA384"), "TLS_AES_256_GCM_SHA384");
}

// A second connection offering the first one's session, in TLS 1.2 and in TLS 1.3: each is
// answered, and none resumes.
void expect_offered_sessions_not_resumed(unsigned short port, const ClientOptions& base) {
    for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        SCOPED_TRACE(version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3");
        ClientOptions options = base;
        options.min_tls_version = version;
        options.max_tls_version = version;
        HttpsClient first(port, options);
        ASSERT_TRUE(first.connect()) << first.last_error();
        EXPECT_EQ(first.request("GET", "/healthz").status, 200);
        // The server gave the client nothing to resume: no ticket, no cached session id.
        EXPECT_EQ(SSL_SESSION_is_resumable(first.session().get()), 0);
        HttpsClient second(port, options);
        second.offer_session(first.session());
        ASSERT_TRUE(second.connect()) << second.last_error();
        EXPECT_EQ(second.request("GET", "/healthz").status, 200);
        EXPECT_FALSE(second.resumed());
    }
}

// kube-apiserver never resumes a TLS session, so the server offers none to resume: a client
// that offers its last session gets a full handshake.
TEST(TlsPolicy, NoSessionIsResumed) {
    ServerFixture fixture;
    expect_offered_sessions_not_resumed(fixture.port(), fixture.client_options());
}

TEST(TlsPolicy, ClientCertificatesAreRequiredWhenAClientCaIsSet) {
    TestCa client_ca("client CA");
    const PemPair client = client_ca.issue("kube-apiserver", true);
    const std::string directory = testing::TempDir();
    write_file(directory + "/client-ca.crt", client_ca.pem().certificate);
    write_file(directory + "/client.crt", client.certificate);
    write_file(directory + "/client.key", client.key);
    ServerFixture fixture(
        [&](server::Config& c) { c.client_ca_file = directory + "/client-ca.crt"; });
    EXPECT_EQ(post_once(fixture.port(), fixture.client_options(), "/validate",
                        validate_review(admitted_object)),
              -1);
    ClientOptions with_certificate = fixture.client_options();
    with_certificate.client_cert_file = directory + "/client.crt";
    with_certificate.client_key_file = directory + "/client.key";
    EXPECT_EQ(
        post_once(fixture.port(), with_certificate, "/validate", validate_review(admitted_object)),
        200);
    // A session offered under client certificates is not resumed either (and is no error).
    expect_offered_sessions_not_resumed(fixture.port(), with_certificate);
}

// The server sends the chain its certificate file holds and nothing more, even when the
// client CAs it trusts hold its own issuer: OpenSSL would otherwise build a chain from that
// store on every handshake (a verification each time) and send the CA along.
TEST(TlsPolicy, TheServerSendsOnlyTheChainItsCertificateFileHolds) {
    // The client CAs are the CA that issued the server's own certificate.
    ServerFixture fixture([](server::Config& c) {
        c.client_ca_file = std::filesystem::path(c.cert_file).parent_path() / "ca.crt";
    });
    const PemPair client = fixture.ca().issue("kube-apiserver", true);
    write_file(fixture.directory() / "client.crt", client.certificate);
    write_file(fixture.directory() / "client.key", client.key);
    ClientOptions options = fixture.client_options();
    options.client_cert_file = fixture.directory() / "client.crt";
    options.client_key_file = fixture.directory() / "client.key";
    HttpsClient https(fixture.port(), options);
    ASSERT_TRUE(https.connect()) << https.last_error();
    EXPECT_EQ(https.request("GET", "/healthz").status, 200);
    EXPECT_EQ(https.peer_common_name(), "server-1");
    EXPECT_EQ(https.peer_chain_length(), 1);
}

TEST(OnePort, ASecondProcessOnTheSamePortIsRefusedAndTheFirstKeepsEveryConnection) {
    ServerFixture first;
    server::Config config;
    config.cert_file = first.directory() / "tls.crt";
    config.key_file = first.directory() / "tls.key";
    config.listen = {"127.0.0.1", first.port()};
    config.health_listen.reset();
    config.threads = 2;
    const server::Log log("error", false);
    auto second = server::Webhook::create(config, log);
    ASSERT_TRUE(second.ok()) << second.error().message;
    const auto started = second.value()->start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.error().message,
              "cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                  ": another process listens there");
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(post_once(first.port(), first.client_options(), "/validate",
                            validate_review(admitted_object)),
                  200);
    }
}

// A start-up file that a YAML reader without bounds never finishes (one comma) or that holds
// a number beyond a double: the start fails at once with the file, line and reason.
TEST(StartUpFiles, AnUnreadableInstanceTypesFileStopsTheStartNamingItsLine) {
    ServerFixture certificates;
    const std::vector<std::pair<std::string, std::string>> files{
        {",",
         ":1:1: not valid YAML or JSON: while parsing a block node: did not find expected "
         "node content"},
        {"kind: InstanceType\nspec:\n  a: 1e999\n",
         ":3:6: not valid YAML or JSON: the number 1e999 is out of range"}};
    for (const auto& [text, message] : files) {
        const auto path = certificates.directory() / "instance-types.yaml";
        write_file(path, text);
        server::Config config;
        config.cert_file = certificates.directory() / "tls.crt";
        config.key_file = certificates.directory() / "tls.key";
        config.instance_types_file = path;
        const server::Log log("error", false);
        const auto webhook = server::Webhook::create(config, log);
        ASSERT_FALSE(webhook.ok()) << text;
        EXPECT_NE(webhook.error().message.find(path.string() + message), std::string::npos)
            << webhook.error().message;
    }
}

TEST(ConnectionCap, ConnectionsOverTheCapAreClosedAtAccept) {
    ServerFixture fixture([](server::Config& c) { c.max_connections = 2; });
    HttpsClient first(fixture.port(), fixture.client_options());
    HttpsClient second(fixture.port(), fixture.client_options());
    ASSERT_TRUE(first.connect());
    ASSERT_TRUE(second.connect());
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_open_connections 2\n"));
    EXPECT_FALSE(HttpsClient(fixture.port(), fixture.client_options()).connect());
    EXPECT_TRUE(fixture.wait_for_metric("mdadmit_connections_rejected_total 1\n"));
    EXPECT_EQ(first.request("POST", "/validate", validate_review(admitted_object)).status, 200);
}

}  // namespace
}  // namespace mdadmit::test
