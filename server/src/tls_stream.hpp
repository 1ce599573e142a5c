#pragma once

// The server side of a TLS connection. OpenSSL writes the socket itself and reads what Asio
// has read into the connection's inbox (a BIO of the stream's own). Asio's ssl::stream copies
// every byte through two fixed 17 KB buffers of its own and a 2 x 17 KB BIO pair: about 68 KB
// per connection, idle or not. Here an idle keep-alive connection holds its SSL object, whose
// record buffers OpenSSL releases while idle (SSL_MODE_RELEASE_BUFFERS), and a 16 KB inbox.
//
// Why Asio reads and not OpenSSL: when OpenSSL finds the socket empty, waiting for it with
// Asio's async_wait re-arms epoll (an epoll_ctl) every time, since a wait cannot know whether
// readiness came before it. A read queued with Asio after one that found nothing waits for
// epoll's next edge as it is: one system call fewer per keep-alive request that finds nothing
// waiting, and per handshake flight.
//
// Timeouts follow beast::tcp_stream: expires_after() bounds the operations that follow, which
// then fail with beast::error::timeout. The operations are Asio composed operations, so Beast's
// HTTP algorithms and coroutines use the stream like any AsyncReadStream/AsyncWriteStream,
// with two limits the HTTP/1.1 session never reaches: one operation at a time (a read and a
// write in flight together would share the timer), and no per-operation cancellation slot
// (cancel() ends the connection's operations instead).

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_sender.hpp"

namespace mdadmit::server {

class TlsStream {
  public:
    using executor_type = boost::asio::any_io_executor;
    using Clock = std::chrono::steady_clock;

    // Null when OpenSSL cannot make the connection's SSL object (out of memory).
    static std::optional<TlsStream> accept(boost::asio::ip::tcp::socket socket, SSL_CTX* context);

    executor_type get_executor() { return state_->socket.get_executor(); }

    void expires_after(Clock::duration duration) { state_->expiry = Clock::now() + duration; }
    // Ends the pending operation, and every later one that would wait for the socket, with
    // operation_aborted: the server is draining, and a cancel that lands between two waits
    // must not be lost.
    void cancel() {
        state_->cancelled = true;
        boost::system::error_code ignored;
        state_->socket.cancel(ignored);
    }
    // Sends close_notify when the socket takes it at once, then closes; it never waits for the
    // client's close_notify, which a client that has left would never send.
    void shutdown();

    template <typename Token>
    auto async_handshake(Token&& token) {
        return start(Handshake{}, std::forward<Token>(token));
    }

    template <typename MutableBuffers, typename Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        for (auto it = boost::asio::buffer_sequence_begin(buffers);
             it != boost::asio::buffer_sequence_end(buffers); ++it) {
            const boost::asio::mutable_buffer buffer = *it;
            if (buffer.size() != 0) {
                return start(Read{buffer}, std::forward<Token>(token));
            }
        }
        return start(Read{}, std::forward<Token>(token));
    }

    // Without waiting: whether OpenSSL already holds bytes of the peer's that a read would
    // return, and the read or write of what can be done at once (0 bytes when it would have to
    // wait for the socket, for which the asynchronous operations are there). A caller with the
    // data in hand saves the round through the executor an asynchronous operation costs.
    bool has_buffered() const {
        return !state_->closed &&
               (SSL_has_pending(state_->ssl) == 1 || state_->inbox.unread() != 0);
    }
    std::size_t read_now(boost::asio::mutable_buffer buffer, boost::system::error_code& ec) {
        return now(Read{buffer}, ec);
    }
    std::size_t write_now(boost::asio::const_buffer buffer, boost::system::error_code& ec) {
        return now(Write{buffer, {}}, ec);
    }
    // As write_now, for an answer gathered with those of the thread's other connections: its
    // records are kept until every handler the event loop has ready has run, and then handed
    // to the kernel with the others' in one system call (BatchSender), which sends what the
    // sockets take and waits for room for the rest. Where the kernel offers no io_uring, the
    // same as write_now.
    std::size_t write_gathered(boost::asio::const_buffer buffer, boost::system::error_code& ec);
    // Whether write_gathered gathers on this thread.
    static bool gathers_writes() { return BatchSender::of_this_thread() != nullptr; }

    // Beast writes a response as a header of many small buffers and a body: the longest prefix
    // up to one TLS record is joined and written as one record (one write to the socket),
    // instead of one record per buffer.
    template <typename ConstBuffers, typename Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        Write write;
        for (auto it = boost::asio::buffer_sequence_begin(buffers);
             it != boost::asio::buffer_sequence_end(buffers); ++it) {
            const boost::asio::const_buffer buffer = *it;
            if (buffer.size() == 0) {
                continue;
            }
            if (write.buffer.size() == 0) {
                write.buffer = buffer;
                if (buffer.size() >= max_joined_write) {
                    break;  // a record's worth on its own: written without a copy
                }
                continue;
            }
            if (write.joined.empty()) {
                write.joined.reserve(max_joined_write);
                write.joined.append(static_cast<const char*>(write.buffer.data()),
                                    write.buffer.size());
            }
            const std::size_t room = max_joined_write - write.joined.size();
            write.joined.append(static_cast<const char*>(buffer.data()),
                                std::min(room, buffer.size()));
            if (write.joined.size() == max_joined_write) {
                break;
            }
        }
        return start(std::move(write), std::forward<Token>(token));
    }

  private:
    // One TLS record's worth of plaintext.
    static constexpr std::size_t max_joined_write = 16 * 1024;

    // What Asio has read off the socket and OpenSSL has not taken yet: 16 KB, so that one read
    // takes a typical review whole and a long body arrives in reads as large as OpenSSL's own.
    class Inbox {
      public:
        // Where the next read may write: after what OpenSSL has not taken yet (nothing, when
        // it asks for more), so no byte read is lost.
        boost::asio::mutable_buffer space() {
            return boost::asio::buffer(bytes_.data() + end_, bytes_.size() - end_);
        }
        void received(std::size_t count) { end_ += count; }
        // Copies up to `size` unread bytes to `out`; how many.
        std::size_t take(char* out, std::size_t size);
        std::size_t unread() const { return end_ - begin_; }
        // The client has closed its side: once the inbox is empty, reads see end of file.
        void finish() { finished_ = true; }
        bool finished() const { return finished_; }

      private:
        std::array<char, 16 * 1024> bytes_;
        std::size_t begin_ = 0;
        std::size_t end_ = 0;
        bool finished_ = false;
    };

    struct State : std::enable_shared_from_this<State> {
        State(boost::asio::ip::tcp::socket s, SSL* connection)
            : socket(std::move(s)), timer(socket.get_executor()), ssl(connection) {}
        ~State() { SSL_free(ssl); }
        State(const State&) = delete;
        State& operator=(const State&) = delete;

        // The end of a wait for the socket: the timer's part undone, and a timeout reported
        // as such rather than as the cancel it caused.
        boost::system::error_code end_wait(boost::system::error_code ec) {
            ++wait_number;
            timer.cancel();
            if (timed_out) {
                timed_out = false;
                return boost::beast::error::timeout;
            }
            return ec;
        }

        boost::asio::ip::tcp::socket socket;
        boost::asio::steady_timer timer;
        SSL* ssl;
        Inbox inbox;
        Clock::time_point expiry = Clock::time_point::max();
        // Each wait for the socket has its own number, so a timer that fires late cannot
        // time out a later wait.
        std::uint64_t wait_number = 0;
        bool timed_out = false;
        bool cancelled = false;
        // After a fatal error OpenSSL may not be asked for close_notify.
        bool failed = false;
        // After shutdown() the descriptor number may already belong to another connection.
        bool closed = false;
        // Records OpenSSL has written that the socket has not taken yet: a gathered answer
        // until the thread's batch is sent, and what the socket had no room for then. Every
        // later write goes after them.
        std::string outbox;
        bool gathering = false;    // the write in progress is a gathered one
        bool in_batch = false;     // the outbox is in the thread's batch
        bool awaits_room = false;  // waiting for the socket to take the rest of the outbox
    };

    // The BIO OpenSSL reads and writes through: reads from the inbox, writes to the socket.
    static BIO_METHOD* connection_bio_method();
    static int bio_read(BIO* bio, char* out, int size);
    static int bio_write(BIO* bio, const char* bytes, int size);
    // Sends what the outbox holds, as far as the socket takes it; whether it is empty now. On
    // a failure the connection has failed and errno says why.
    static bool send_outbox(State& state);
    // Puts the connection's outbox into the thread's batch, which is sent once the handlers
    // the event loop has ready have run.
    static void gather(State& state);
    static void send_batch();
    // The connections of this thread whose outbox waits for the batch to be sent.
    static thread_local std::vector<std::shared_ptr<State>> batch_;
    // Sends the rest of the outbox once the socket has room for it.
    static void await_room(std::shared_ptr<State> state);
    static long bio_control(BIO* bio, int command, long number, void* pointer);

    // One non-blocking OpenSSL call each; 1 on success, else OpenSSL's return value.
    struct Handshake {
        int attempt(State& state, std::size_t&) { return SSL_do_handshake(state.ssl); }
        bool empty() const { return false; }
        bool waits_first(const State&) const { return false; }
    };
    struct Read {
        boost::asio::mutable_buffer buffer;
        int attempt(State& state, std::size_t& bytes) {
            return SSL_read_ex(state.ssl, buffer.data(), buffer.size(), &bytes);
        }
        bool empty() const { return buffer.size() == 0; }
        // Nothing to decrypt, in OpenSSL or in the inbox, and nothing of OpenSSL's waiting to
        // be written: the read can only wait for the socket. Asked anyway, OpenSSL would
        // allocate its 16 KB read buffer and release it again (SSL_MODE_RELEASE_BUFFERS), each
        // time a keep-alive connection waits for its next request.
        bool waits_first(const State& state) const {
            return !empty() && !state.closed && state.inbox.unread() == 0 &&
                   !state.inbox.finished() && SSL_has_pending(state.ssl) == 0 &&
                   SSL_want_write(state.ssl) == 0;
        }
    };
    struct Write {
        boost::asio::const_buffer buffer;
        // The buffers joined, when there are several; OpenSSL may be handed it again after a
        // wait from its new address (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER).
        std::string joined;
        int attempt(State& state, std::size_t& bytes) {
            return joined.empty() ? SSL_write_ex(state.ssl, buffer.data(), buffer.size(), &bytes)
                                  : SSL_write_ex(state.ssl, joined.data(), joined.size(), &bytes);
        }
        bool empty() const { return buffer.size() == 0; }
        bool waits_first(const State&) const { return false; }
    };

    // Calls the step until OpenSSL stops asking for the socket, waiting for it in between.
    template <typename Step>
    struct Operation {
        std::shared_ptr<State> state;
        Step step;
        bool first_call = true;
        // A result reached inside the initiating call, delivered after a post.
        std::optional<std::pair<boost::system::error_code, std::size_t>> posted;

        template <typename Self>
        void operator()(Self& self, boost::system::error_code ec = {}) {
            const bool initiating = first_call;
            first_call = false;
            if (posted) {
                self.complete(posted->first, posted->second);
                return;
            }
            if (ec) {
                self.complete(ec, 0);
                return;
            }
            const Attempt attempt = step.waits_first(*state)
                                        ? Attempt{boost::asio::socket_base::wait_read, {}, 0}
                                        : try_step(*state, step);
            if (!attempt.wait) {
                finish(self, initiating, attempt.ec, attempt.bytes);
                return;
            }
            if (state->cancelled) {
                finish(self, initiating, boost::asio::error::operation_aborted, 0);
                return;
            }
            if (Clock::now() >= state->expiry) {
                finish(self, initiating, boost::beast::error::timeout, 0);
                return;
            }
            wait(self, *attempt.wait);
        }

        template <typename Self>
        void finish(Self& self, bool initiating, boost::system::error_code ec, std::size_t bytes) {
            if (!initiating) {
                self.complete(ec, bytes);
                return;
            }
            // Asio never completes an operation inside the call that starts it.
            posted.emplace(ec, bytes);
            boost::asio::post(state->socket.get_executor(), std::move(self));
        }

        // Waits for the socket: for OpenSSL's reads, Asio reads into the inbox; for its writes,
        // Asio waits until the socket takes more.
        template <typename Self>
        void wait(Self& self, boost::asio::socket_base::wait_type type) {
            const std::uint64_t number = ++state->wait_number;
            if (state->expiry != Clock::time_point::max()) {
                state->timer.expires_at(state->expiry);
                state->timer.async_wait([state = state, number](boost::system::error_code ec) {
                    if (!ec && state->wait_number == number) {
                        state->timed_out = true;
                        boost::system::error_code ignored;
                        state->socket.cancel(ignored);
                    }
                });
            }
            auto executor =
                boost::asio::get_associated_executor(self, state->socket.get_executor());
            // `self` holds this Operation and its `state`: nothing may read `state` once the
            // handler has taken `self`.
            std::shared_ptr<State> shared = state;
            boost::asio::ip::tcp::socket& socket = shared->socket;
            if (type == boost::asio::socket_base::wait_read) {
                const boost::asio::mutable_buffer space = shared->inbox.space();
                socket.async_read_some(
                    space,
                    boost::asio::bind_executor(
                        executor, [state = std::move(shared), self = std::move(self)](
                                      boost::system::error_code ec, std::size_t bytes) mutable {
                            state->inbox.received(bytes);
                            ec = state->end_wait(ec);
                            if (ec == boost::asio::error::eof) {
                                // OpenSSL tells a clean close from a cut-off one.
                                state->inbox.finish();
                                ec = {};
                            } else if (ec && ec != boost::asio::error::operation_aborted &&
                                       ec != boost::beast::error::timeout) {
                                state->failed = true;  // a reset: no close_notify
                            }
                            self(ec);
                        }));
                return;
            }
            socket.async_wait(
                type, boost::asio::bind_executor(
                          executor, [state = std::move(shared),
                                     self = std::move(self)](boost::system::error_code ec) mutable {
                              self(state->end_wait(ec));
                          }));
        }
    };

    // One try of a step, without waiting: finished (with an error or the bytes done), or
    // the wait on the socket it needs first.
    struct Attempt {
        std::optional<boost::asio::socket_base::wait_type> wait;
        boost::system::error_code ec;
        std::size_t bytes = 0;
    };

    template <typename Step>
    static Attempt try_step(State& state, Step& step) {
        if (state.closed) {
            return {std::nullopt, boost::asio::error::bad_descriptor, 0};
        }
        std::size_t bytes = 0;
        int result = 1;
        if (!step.empty()) {
            ERR_clear_error();
            errno = 0;
            result = step.attempt(state, bytes);
        }
        if (result == 1) {
            return {std::nullopt, {}, bytes};
        }
        const int error = SSL_get_error(state.ssl, result);
        if (error == SSL_ERROR_WANT_READ) {
            return {boost::asio::socket_base::wait_read, {}, 0};
        }
        if (error == SSL_ERROR_WANT_WRITE) {
            return {boost::asio::socket_base::wait_write, {}, 0};
        }
        state.failed = error == SSL_ERROR_SYSCALL || error == SSL_ERROR_SSL;
        return {std::nullopt, failure(error), 0};
    }

    // An OpenSSL failure as an error code: the client leaving is end of file.
    static boost::system::error_code failure(int error) {
        if (error == SSL_ERROR_ZERO_RETURN) {
            return boost::asio::error::eof;
        }
        const unsigned long queued = ERR_get_error();
        if (ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            return boost::asio::error::eof;  // gone without close_notify
        }
        if (queued != 0) {
            return {static_cast<int>(queued), boost::asio::error::get_ssl_category()};
        }
        if (error == SSL_ERROR_SYSCALL && errno != 0) {
            return {errno, boost::system::system_category()};
        }
        return boost::asio::error::eof;
    }

    // A step tried once, for read_now and write_now: 0 bytes when it would have to wait.
    template <typename Step>
    std::size_t now(Step step, boost::system::error_code& ec) {
        const Attempt attempt = try_step(*state_, step);
        ec = attempt.ec;
        return attempt.bytes;
    }

    template <typename Step, typename Token>
    auto start(Step step, Token&& token) {
        return boost::asio::async_compose<Token, void(boost::system::error_code, std::size_t)>(
            Operation<Step>{state_, std::move(step), true, std::nullopt}, token, state_->socket);
    }

    explicit TlsStream(std::shared_ptr<State> state) : state_(std::move(state)) {}

    std::shared_ptr<State> state_;
};

}  // namespace mdadmit::server
