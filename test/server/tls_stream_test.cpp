// TlsStream, the server's own OpenSSL stream, over a real loopback socket against a client
// whose TLS runs in memory, so each test decides exactly which bytes reach the server and
// when: records split at every byte, a long body, a reset in the middle of a record,
// close_notify both ways and none, a write of many records, timeouts, and the drain's cancel.
#include "tls_stream.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "test_certificates.hpp"
#include "tls_context.hpp"

namespace mdadmit::test {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using server::TlsStream;

// A TLS client in memory: OpenSSL reads what the test feeds it and writes into a buffer the
// test sends on the socket as it likes.
class MemoryClient {
  public:
    MemoryClient() : context_(SSL_CTX_new(TLS_client_method())) {
        SSL_CTX_set_verify(context_, SSL_VERIFY_NONE, nullptr);
        ssl_ = SSL_new(context_);
        BIO* in = BIO_new(BIO_s_mem());
        BIO* out = BIO_new(BIO_s_mem());
        SSL_set_bio(ssl_, in, out);  // the SSL owns both
        SSL_set_connect_state(ssl_);
        SSL_set_tlsext_host_name(ssl_, "localhost");
    }
    MemoryClient(const MemoryClient&) = delete;
    MemoryClient& operator=(const MemoryClient&) = delete;
    ~MemoryClient() {
        SSL_free(ssl_);
        SSL_CTX_free(context_);
    }

    // What OpenSSL wants sent: handshake flights, records, alerts.
    std::string outgoing() {
        std::string bytes;
        char chunk[4096];
        int n = 0;
        while ((n = BIO_read(SSL_get_wbio(ssl_), chunk, sizeof chunk)) > 0) {
            bytes.append(chunk, static_cast<std::size_t>(n));
        }
        return bytes;
    }
    void incoming(const std::string& bytes) {
        BIO_write(SSL_get_rbio(ssl_), bytes.data(), static_cast<int>(bytes.size()));
    }
    bool handshake_done() { return SSL_do_handshake(ssl_) == 1; }
    std::string seal(const std::string& plaintext) {
        SSL_write(ssl_, plaintext.data(), static_cast<int>(plaintext.size()));
        return outgoing();
    }
    // Plaintext decrypted so far; sets closed when the server's close_notify arrived.
    std::string open(bool& closed) {
        std::string plaintext;
        char chunk[4096];
        int n = 0;
        while ((n = SSL_read(ssl_, chunk, sizeof chunk)) > 0) {
            plaintext.append(chunk, static_cast<std::size_t>(n));
        }
        closed = SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN;
        return plaintext;
    }
    // Asks for a second handshake on the established connection (TLS 1.2 only).
    std::string renegotiate() {
        SSL_renegotiate(ssl_);
        SSL_do_handshake(ssl_);
        return outgoing();
    }
    bool renegotiation_pending() { return SSL_renegotiate_pending(ssl_) == 1; }
    void at_most_tls12() { SSL_set_max_proto_version(ssl_, TLS1_2_VERSION); }
    std::string close_notify() {
        SSL_shutdown(ssl_);
        return outgoing();
    }

  private:
    SSL_CTX* context_;
    SSL* ssl_ = nullptr;
};

// The client's end of the connection: a blocking socket.
class ClientSocket {
  public:
    explicit ClientSocket(tcp::socket socket) : socket_(std::move(socket)) {
        const int on = 1;
        ::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    // Sends `bytes` in pieces of `piece` bytes, one send() each.
    void send(const std::string& bytes, std::size_t piece = SIZE_MAX) {
        for (std::size_t at = 0; at < bytes.size(); at += piece) {
            asio::write(socket_,
                        asio::buffer(bytes.data() + at, std::min(piece, bytes.size() - at)));
            if (piece < bytes.size()) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
    }
    // Whatever arrives within `wait` (at least one read when something is there).
    std::string receive(std::chrono::milliseconds wait = std::chrono::milliseconds(200)) {
        std::string bytes;
        const auto until = std::chrono::steady_clock::now() + wait;
        while (std::chrono::steady_clock::now() < until) {
            if (socket_.available() == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                continue;
            }
            char chunk[65536];
            boost::system::error_code ec;
            const std::size_t n = socket_.read_some(asio::buffer(chunk), ec);
            bytes.append(chunk, n);
            if (ec) {
                break;
            }
        }
        return bytes;
    }
    // Completes the handshake, sending every flight in pieces of `piece` bytes.
    void handshake(MemoryClient& client, std::size_t piece = SIZE_MAX) {
        for (int round = 0; round < 50 && !client.handshake_done(); ++round) {
            send(client.outgoing(), piece);
            client.incoming(receive(std::chrono::milliseconds(20)));
        }
        send(client.outgoing(), piece);  // TLS 1.3: the client's Finished
    }
    // Leaves without close_notify: a FIN only.
    void close() { socket_.close(); }
    void reset() {
        const linger abort{1, 0};
        ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
        socket_.close();
    }
    tcp::socket& socket() { return socket_; }

  private:
    tcp::socket socket_;
};

// The server's handshake, then reads until `expected` bytes of plaintext have arrived.
struct ServerRead {
    struct Outcome {
        std::string data;
        boost::system::error_code error;
        bool done = false;
    };

    explicit ServerRead(TlsStream& s) : stream(s) {}

    TlsStream& stream;
    std::string data;
    boost::system::error_code error;
    std::atomic<bool> done{false};
};

void read_until(ServerRead& read, std::size_t expected) {
    auto buffer = std::make_shared<std::array<char, 4096>>();
    read.stream.async_read_some(
        asio::buffer(*buffer),
        [&read, buffer, expected](boost::system::error_code ec, std::size_t n) {
            read.data.append(buffer->data(), n);
            if (ec || read.data.size() >= expected) {
                read.error = ec;
                read.done = true;
                return;
            }
            read_until(read, expected);
        });
}

void handshake_then_read(ServerRead& read, std::size_t expected) {
    read.stream.async_handshake([&read, expected](boost::system::error_code ec, std::size_t) {
        if (ec) {
            read.error = ec;
            read.done = true;
            return;
        }
        read_until(read, expected);
    });
}

// `size` bytes of the alphabet over and over: a body whose every misplaced byte shows.
std::string alphabet(std::size_t size) {
    std::string body(size, ' ');
    for (std::size_t i = 0; i < body.size(); ++i) {
        body[i] = static_cast<char>('a' + i % 26);
    }
    return body;
}

// The two ends of one connection: the client's blocking socket and the server's TlsStream.
struct Connection {
    ClientSocket client;
    TlsStream server;
};

class TlsStreamTest : public testing::Test {
  protected:
    void SetUp() override {
        directory_ = std::filesystem::temp_directory_path() /
                     ("mdadmit-tls-stream-" + std::to_string(::getpid()));
        std::filesystem::create_directories(directory_);
        const PemPair serving = ca_.issue("localhost");
        write_file(directory_ / "tls.crt", serving.certificate);
        write_file(directory_ / "tls.key", serving.key);
        auto context =
            server::make_tls_context({directory_ / "tls.crt", directory_ / "tls.key", "", false});
        ASSERT_TRUE(context.ok()) << context.error().message;
        context_ = std::move(context).value();
    }
    void TearDown() override { std::filesystem::remove_all(directory_); }

    Connection connect(int send_buffer = 0) {
        tcp::acceptor acceptor(io_, {asio::ip::make_address("127.0.0.1"), 0});
        tcp::socket client(client_io_);
        if (send_buffer > 0) {
            client.open(tcp::v4());
            const int size = send_buffer;
            ::setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
        }
        client.connect(acceptor.local_endpoint());
        tcp::socket server = acceptor.accept();
        if (send_buffer > 0) {
            const int size = send_buffer;
            ::setsockopt(server.native_handle(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        }
        auto stream = TlsStream::accept(std::move(server), context_->native_handle());
        EXPECT_TRUE(stream.has_value());
        return {ClientSocket(std::move(client)), std::move(*stream)};
    }

    // On a fresh connection, the server's handshake and one read of up to `expected` bytes,
    // while the client does `client_does` (its handshake first) on a thread of its own.
    ServerRead::Outcome read_while(
        const std::function<void(ClientSocket&, MemoryClient&)>& client_does,
        std::size_t expected) {
        Connection connection = connect();
        MemoryClient client;
        std::thread peer([&] { client_does(connection.client, client); });
        ServerRead read{connection.server};
        handshake_then_read(read, expected);
        run_until(read.done);
        peer.join();
        return {read.data, read.error, read.done};
    }

    // Both sides of the handshake: the client's on a thread, the server's here.
    void handshake(ClientSocket& client_socket, TlsStream& stream, MemoryClient& client) {
        std::thread peer([&] { client_socket.handshake(client); });
        std::atomic<bool> shaken{false};
        boost::system::error_code error;
        stream.async_handshake([&](boost::system::error_code ec, std::size_t) {
            error = ec;
            shaken = true;
        });
        run_until(shaken);
        peer.join();
        ASSERT_FALSE(error) << error.message();
    }

    // After the connection has been idle (OpenSSL released its record buffers), the client
    // sends `request` in pieces of `piece` bytes and the server reads it.
    ServerRead::Outcome read_after_idle(ClientSocket& client_socket, TlsStream& stream,
                                        MemoryClient& client, const std::string& request,
                                        std::size_t piece) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::thread again([&] { client_socket.send(client.seal(request), piece); });
        ServerRead read{stream};
        read_until(read, request.size());
        run_until(read.done);
        again.join();
        return {read.data, read.error, read.done};
    }

    // Writes all of `bytes` from the server's side; how the write ended.
    boost::system::error_code write_all(TlsStream& stream, const std::string& bytes) {
        std::atomic<bool> written{false};
        boost::system::error_code error;
        asio::async_write(stream, asio::buffer(bytes),
                          [&](boost::system::error_code ec, std::size_t) {
                              error = ec;
                              written = true;
                          });
        run_until(written);
        return error;
    }

    // Runs the server's side until `done` or 10 s.
    void run_until(const std::atomic<bool>& done) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done && std::chrono::steady_clock::now() < until) {
            io_.run_for(std::chrono::milliseconds(5));
            io_.restart();
        }
    }

    asio::io_context io_;
    asio::io_context client_io_;
    std::filesystem::path directory_;
    TestCa ca_;
    std::shared_ptr<asio::ssl::context> context_;
};

TEST_F(TlsStreamTest, RecordsSplitAtEveryByteAreReadWholeTwiceWithIdleBuffersReleasedBetween) {
    auto client_socket_and_stream = connect();
    ClientSocket& client_socket = client_socket_and_stream.client;
    TlsStream& stream = client_socket_and_stream.server;
    MemoryClient client;
    std::thread peer([&] {
        client_socket.handshake(client, 1);
        client_socket.send(client.seal("first request"), 1);
    });
    ServerRead first{stream};
    handshake_then_read(first, 13);
    run_until(first.done);
    peer.join();
    EXPECT_FALSE(first.error) << first.error.message();
    EXPECT_EQ(first.data, "first request");

    const auto second = read_after_idle(client_socket, stream, client, "second", 1);
    EXPECT_FALSE(second.error) << second.error.message();
    EXPECT_EQ(second.data, "second");
}

TEST_F(TlsStreamTest, APeerThatResetsInTheMiddleOfARecordEndsTheReadWithAnError) {
    const auto read = read_while(
        [](ClientSocket& socket, MemoryClient& client) {
            socket.handshake(client);
            const std::string record = client.seal(std::string(1000, 'x'));
            socket.send(record.substr(0, record.size() / 2));
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            socket.reset();
        },
        1000);
    ASSERT_TRUE(read.done);
    EXPECT_TRUE(read.error);
    EXPECT_TRUE(read.data.empty()) << "half a record is never plaintext";
}

TEST_F(TlsStreamTest, ARecordOfGarbageEndsTheReadWithAnError) {
    const auto read = read_while(
        [](ClientSocket& socket, MemoryClient& client) {
            socket.handshake(client);
            // An application-data record whose contents no key produced.
            socket.send(std::string("\x17\x03\x03\x00\x20", 5) + std::string(32, '\x5a'));
        },
        1);
    ASSERT_TRUE(read.done);
    EXPECT_TRUE(read.error);
    EXPECT_TRUE(read.data.empty());
}

TEST_F(TlsStreamTest, RenegotiationIsRefused) {
    auto client_socket_and_stream = connect();
    ClientSocket& client_socket = client_socket_and_stream.client;
    TlsStream& stream = client_socket_and_stream.server;
    MemoryClient client;
    client.at_most_tls12();
    std::atomic<bool> answered{false};
    std::thread peer([&] {
        client_socket.handshake(client);
        client_socket.send(client.renegotiate());
        // As many rounds as a second handshake would take, had the server accepted it.
        for (int round = 0; round < 5 && client.renegotiation_pending(); ++round) {
            client.incoming(client_socket.receive(std::chrono::milliseconds(30)));
            client.handshake_done();
            client_socket.send(client.outgoing());
        }
        answered = true;
    });
    ServerRead read{stream};
    handshake_then_read(read, 1);
    run_until(answered);
    io_.run_for(std::chrono::milliseconds(50));
    peer.join();
    EXPECT_TRUE(client.renegotiation_pending()) << "the server took part in a second handshake";
}

// The Debian OpenSSL this is built against has no zlib, so a handshake cannot show compression
// refused; the context's options are what keep it (and renegotiation) off on a build that has.
// No session is stored server-side, so no client's handshakes grow the server's memory.
TEST_F(TlsStreamTest, TheContextRefusesCompressionAndRenegotiationAndStoresNoSessions) {
    SSL_CTX* native = context_->native_handle();
    const std::uint64_t options = SSL_CTX_get_options(native);
    EXPECT_NE(options & SSL_OP_NO_COMPRESSION, 0U);
    EXPECT_NE(options & SSL_OP_NO_RENEGOTIATION, 0U);
    // No session to resume: no TLS 1.2 ticket, no TLS 1.3 ticket, no session cache.
    EXPECT_NE(options & SSL_OP_NO_TICKET, 0U);
    EXPECT_EQ(SSL_CTX_get_num_tickets(native), 0U);
    EXPECT_EQ(SSL_CTX_get_session_cache_mode(native), SSL_SESS_CACHE_OFF);
    // A full TLS 1.2 handshake, which would otherwise leave its session in the cache.
    MemoryClient client;
    client.at_most_tls12();
    Connection connection = connect();
    handshake(connection.client, connection.server, client);
    EXPECT_EQ(SSL_CTX_sess_number(native), 0);
}

TEST_F(TlsStreamTest, CloseNotifyBothWays) {
    const auto read = read_while(
        [](ClientSocket& socket, MemoryClient& client) {
            socket.handshake(client);
            socket.send(client.close_notify());
        },
        1);
    EXPECT_EQ(read.error, asio::error::eof) << read.error.message();

    auto other_socket_and_other = connect();
    ClientSocket& other_socket = other_socket_and_other.client;
    TlsStream& other = other_socket_and_other.server;
    MemoryClient second;
    handshake(other_socket, other, second);
    other.shutdown();
    second.incoming(other_socket.receive());
    bool closed = false;
    EXPECT_EQ(second.open(closed), "");
    EXPECT_TRUE(closed) << "the server's close_notify reached the client";
}

TEST_F(TlsStreamTest, AClientThatLeavesWithoutCloseNotifyEndsTheReadWithEndOfFile) {
    const auto read = read_while(
        [](ClientSocket& socket, MemoryClient& client) {
            socket.handshake(client);
            socket.send(client.seal("partial"));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            socket.close();
        },
        100);
    ASSERT_TRUE(read.done);
    EXPECT_EQ(read.data, "partial");
    EXPECT_EQ(read.error, asio::error::eof) << read.error.message();
}

// A body of many full records arrives over many reads, each filling the inbox; the small
// request after it, once the connection was idle, is read as before.
TEST_F(TlsStreamTest, ALongBodyOfFullRecordsAndASmallRequestAfterItAreReadWhole) {
    auto client_socket_and_stream = connect();
    ClientSocket& client_socket = client_socket_and_stream.client;
    TlsStream& stream = client_socket_and_stream.server;
    MemoryClient client;
    const std::string body = alphabet(300'000);
    std::thread peer([&] {
        client_socket.handshake(client);
        client_socket.send(client.seal(body));
    });
    ServerRead long_body{stream};
    handshake_then_read(long_body, body.size());
    run_until(long_body.done);
    peer.join();
    EXPECT_FALSE(long_body.error) << long_body.error.message();
    EXPECT_EQ(long_body.data, body);

    const auto small = read_after_idle(client_socket, stream, client, "small", SIZE_MAX);
    EXPECT_FALSE(small.error) << small.error.message();
    EXPECT_EQ(small.data, "small");
}

TEST_F(TlsStreamTest, AWriteOfManyRecordsArrivesWhole) {
    auto client_socket_and_stream = connect();
    ClientSocket& client_socket = client_socket_and_stream.client;
    TlsStream& stream = client_socket_and_stream.server;
    MemoryClient client;
    handshake(client_socket, stream, client);

    const std::string body = alphabet(40'000);
    const boost::system::error_code error = write_all(stream, body);
    EXPECT_FALSE(error) << error.message();
    std::string received;
    bool closed = false;
    for (int i = 0; i < 50 && received.size() < body.size(); ++i) {
        client.incoming(client_socket.receive(std::chrono::milliseconds(20)));
        received += client.open(closed);
    }
    EXPECT_EQ(received, body);
}

// Writes all of `bytes` as gathered writes, a record at a time as OpenSSL takes them; whether
// every write took its record at once.
bool gather(TlsStream& stream, std::string_view bytes) {
    while (!bytes.empty()) {
        boost::system::error_code ec;
        const std::size_t written = stream.write_gathered(asio::buffer(bytes), ec);
        if (ec || written == 0) {
            return false;
        }
        bytes.remove_prefix(written);
    }
    return true;
}

// Answers gathered on several connections are kept until the ready handlers of the event loop
// have run, then leave together: each client gets its own, whole, and a write after a gathered
// one comes after it.
TEST_F(TlsStreamTest, GatheredWritesLeaveTogetherOnceTheLoopRunsOnEachWholeAndInOrder) {
    if (!TlsStream::gathers_writes()) {
        GTEST_SKIP() << "the kernel refuses io_uring here: gathered writes are plain writes";
    }
    std::vector<Connection> connections;
    std::vector<std::unique_ptr<MemoryClient>> clients;
    for (int k = 0; k < 3; ++k) {
        connections.push_back(connect());
        clients.push_back(std::make_unique<MemoryClient>());
        handshake(connections[k].client, connections[k].server, *clients[k]);
    }
    std::vector<std::string> bodies;
    for (std::size_t k = 0; k < connections.size(); ++k) {
        bodies.push_back(std::to_string(k) + alphabet(1'000 + 20'000 * k));
        EXPECT_TRUE(gather(connections[k].server, bodies[k]));
    }
    for (auto& connection : connections) {
        EXPECT_EQ(connection.client.receive(std::chrono::milliseconds(20)), "");
    }
    io_.poll();
    io_.restart();
    for (std::size_t k = 0; k < connections.size(); ++k) {
        EXPECT_FALSE(write_all(connections[k].server, "after"));
        std::string received;
        bool closed = false;
        for (int i = 0; i < 50 && received.size() < bodies[k].size() + 5; ++i) {
            clients[k]->incoming(connections[k].client.receive(std::chrono::milliseconds(20)));
            received += clients[k]->open(closed);
        }
        EXPECT_EQ(received.size(), bodies[k].size() + 5) << k;
        EXPECT_TRUE(received == bodies[k] + "after") << k;
    }
}

// A gathered write the socket has no room for is kept and sent as room comes, and what is
// written after it waits behind it.
TEST_F(TlsStreamTest, AGatheredWriteTheSocketCannotTakeIsSentAsRoomComes) {
    if (!TlsStream::gathers_writes()) {
        GTEST_SKIP() << "the kernel refuses io_uring here: gathered writes are plain writes";
    }
    auto connection = connect(4096);
    MemoryClient client;
    handshake(connection.client, connection.server, client);
    const std::string body = alphabet(3'000'000);
    EXPECT_TRUE(gather(connection.server, body));
    std::atomic<bool> written{false};
    asio::async_write(connection.server, asio::buffer(std::string_view("after")),
                      [&](boost::system::error_code error, std::size_t) {
                          EXPECT_FALSE(error) << error.message();
                          written = true;
                      });
    std::string received;
    bool closed = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (received.size() < body.size() + 5 && std::chrono::steady_clock::now() < until) {
        io_.poll();
        io_.restart();
        client.incoming(connection.client.receive(std::chrono::milliseconds(5)));
        received += client.open(closed);
    }
    io_.poll();
    EXPECT_TRUE(written);
    EXPECT_EQ(received.size(), body.size() + 5);
    EXPECT_TRUE(received == body + "after");
}

TEST_F(TlsStreamTest, TimeoutsEndTheHandshakeTheReadAndTheWrite) {
    // A client that connects and says nothing.
    auto silent_socket_and_silent = connect();
    // silent_socket_and_silent.client stays connected and silent.
    TlsStream& silent = silent_socket_and_silent.server;
    ServerRead unanswered{silent};
    silent.expires_after(std::chrono::milliseconds(100));
    handshake_then_read(unanswered, 1);
    run_until(unanswered.done);
    EXPECT_EQ(unanswered.error, boost::beast::error::timeout) << unanswered.error.message();

    // A client that completes the handshake and sends no request.
    auto quiet_socket_and_quiet = connect();
    ClientSocket& quiet_socket = quiet_socket_and_quiet.client;
    TlsStream& quiet = quiet_socket_and_quiet.server;
    MemoryClient client;
    handshake(quiet_socket, quiet, client);
    quiet.expires_after(std::chrono::milliseconds(100));
    ServerRead read{quiet};
    read_until(read, 1);
    run_until(read.done);
    EXPECT_EQ(read.error, boost::beast::error::timeout) << read.error.message();

    // A client that never reads what the server writes.
    auto full_socket_and_full = connect(4096);
    ClientSocket& full_socket = full_socket_and_full.client;
    TlsStream& full = full_socket_and_full.server;
    MemoryClient reader;
    handshake(full_socket, full, reader);
    full.expires_after(std::chrono::milliseconds(200));
    const std::string body(16 * 1024 * 1024, 'x');
    const boost::system::error_code error = write_all(full, body);
    EXPECT_EQ(error, boost::beast::error::timeout) << error.message();
}

TEST_F(TlsStreamTest, TheDrainsCancelEndsThePendingReadAndEveryLaterOne) {
    auto client_socket_and_stream = connect();
    ClientSocket& client_socket = client_socket_and_stream.client;
    TlsStream& stream = client_socket_and_stream.server;
    MemoryClient client;
    handshake(client_socket, stream, client);

    ServerRead pending{stream};
    read_until(pending, 1);
    io_.run_for(std::chrono::milliseconds(20));
    io_.restart();
    stream.cancel();
    run_until(pending.done);
    EXPECT_EQ(pending.error, asio::error::operation_aborted) << pending.error.message();

    ServerRead later{stream};
    read_until(later, 1);
    run_until(later.done);
    EXPECT_EQ(later.error, asio::error::operation_aborted) << later.error.message();
}

}  // namespace
}  // namespace mdadmit::test
