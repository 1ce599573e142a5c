#include "tls_stream.hpp"

#include <sys/socket.h>

#include <climits>
#include <cstddef>
#include <cstring>
#include <vector>

#include "batch_sender.hpp"

namespace mdadmit::server {

namespace {

// An outbox that grew past this for a long answer, or a socket slow to take one, is given
// back once empty, as a connection gives back its request and answer memory.
constexpr std::size_t kept_outbox_bytes = 64 * 1024;

}  // namespace

thread_local std::vector<std::shared_ptr<TlsStream::State>> TlsStream::batch_;

std::optional<TlsStream> TlsStream::accept(boost::asio::ip::tcp::socket socket, SSL_CTX* context) {
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    BIO_METHOD* method = connection_bio_method();
    if (ec || method == nullptr) {
        return std::nullopt;
    }
    // Owned here until the State takes it; the SSL owns the BIO once given it.
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context), SSL_free);
    BIO* bio = ssl ? BIO_new(method) : nullptr;
    if (bio == nullptr) {
        ERR_clear_error();
        return std::nullopt;
    }
    SSL_set_bio(ssl.get(), bio, bio);
    auto state = std::make_shared<State>(std::move(socket), ssl.get());
    ssl.release();
    // The BIO reads and writes through the State, which frees the SSL and with it the BIO.
    BIO_set_data(bio, state.get());
    BIO_set_init(bio, 1);
    SSL* connection = state->ssl;
    SSL_set_accept_state(connection);
    // One read takes all the inbox holds, not a record header and then its body.
    SSL_set_read_ahead(connection, 1);
    SSL_set_mode(connection, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                 SSL_MODE_RELEASE_BUFFERS);
    return TlsStream(std::move(state));
}

BIO_METHOD* TlsStream::connection_bio_method() {
    // Made once and kept for the life of the process, as OpenSSL's own methods are.
    static BIO_METHOD* const method = [] {
        const int index = BIO_get_new_index();
        BIO_METHOD* made = index == -1
                               ? nullptr
                               : BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "mdadmit connection");
        if (made != nullptr) {
            BIO_meth_set_read(made, bio_read);
            BIO_meth_set_write(made, bio_write);
            BIO_meth_set_ctrl(made, bio_control);
        }
        return made;
    }();
    return method;
}

int TlsStream::bio_read(BIO* bio, char* out, int size) {
    Inbox& inbox = static_cast<State*>(BIO_get_data(bio))->inbox;
    BIO_clear_retry_flags(bio);
    if (size <= 0) {
        return 0;
    }
    if (inbox.unread() == 0) {
        if (inbox.finished()) {
            return 0;
        }
        BIO_set_retry_read(bio);
        return -1;
    }
    return static_cast<int>(inbox.take(out, static_cast<std::size_t>(size)));
}

int TlsStream::bio_write(BIO* bio, const char* bytes, int size) {
    State& state = *static_cast<State*>(BIO_get_data(bio));
    BIO_clear_retry_flags(bio);
    // A gathered write joins the batch, after what its connection already has there (the
    // records before, or the answers before to requests that came together).
    if (state.gathering && (state.in_batch || state.outbox.empty())) {
        state.outbox.append(bytes, static_cast<std::size_t>(size));
        gather(state);
        return size;
    }
    // Otherwise what the outbox holds goes first. While the socket has no room for it, a
    // writer waits as for a full socket: a client that reads no answers gets no more of them.
    if (!state.outbox.empty() && !send_outbox(state)) {
        if (!state.failed) {
            BIO_set_retry_write(bio);
        }
        return -1;
    }
    // MSG_NOSIGNAL: a client that has gone is a write error, not a SIGPIPE.
    const ssize_t sent =
        ::send(state.socket.native_handle(), bytes, static_cast<std::size_t>(size), MSG_NOSIGNAL);
    if (sent >= 0) {
        return static_cast<int>(sent);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        BIO_set_retry_write(bio);
    }
    return -1;  // errno says why, for failure()
}

std::size_t TlsStream::write_gathered(boost::asio::const_buffer buffer,
                                      boost::system::error_code& ec) {
    if (BatchSender::of_this_thread() == nullptr) {
        return write_now(buffer, ec);
    }
    state_->gathering = true;
    const std::size_t written = write_now(buffer, ec);
    state_->gathering = false;
    return written;
}

bool TlsStream::send_outbox(State& state) {
    std::size_t sent = 0;
    while (sent < state.outbox.size()) {
        const ssize_t result = ::send(state.socket.native_handle(), state.outbox.data() + sent,
                                      state.outbox.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (result >= 0) {
            sent += static_cast<std::size_t>(result);
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            state.failed = true;
            state.outbox.clear();
            return false;
        }
        break;
    }
    state.outbox.erase(0, sent);
    if (state.outbox.empty() && state.outbox.capacity() > kept_outbox_bytes) {
        std::string().swap(state.outbox);
    }
    return state.outbox.empty();
}

void TlsStream::gather(State& state) {
    if (state.in_batch) {
        return;
    }
    state.in_batch = true;
    if (batch_.empty()) {
        // Behind every handler the event loop has ready: the requests one wait found ready
        // are all read and judged before their answers leave.
        boost::asio::post(state.socket.get_executor(), [] { send_batch(); });
    }
    batch_.push_back(state.shared_from_this());
}

void TlsStream::send_batch() {
    // Kept from one batch to the next, as the batch is: sending one allocates nothing.
    thread_local std::vector<BatchSender::Send> sends;
    sends.clear();
    for (const auto& state : batch_) {
        sends.push_back({state->closed ? -1 : state->socket.native_handle(), state->outbox});
    }
    // Without a sender (its ring failed since the batch began) each send stays -EAGAIN, not
    // sent, and sends by itself below.
    if (BatchSender* sender = BatchSender::of_this_thread(); sender != nullptr) {
        sender->send_all(sends);
    }
    for (std::size_t k = 0; k < batch_.size(); ++k) {
        std::shared_ptr<State> state = std::move(batch_[k]);
        state->in_batch = false;
        const long result = sends[k].result;
        if (state->closed) {
            continue;  // shutdown() sent what it could
        }
        if (result > 0) {
            state->outbox.erase(0, static_cast<std::size_t>(result));
        } else if (result != -EAGAIN && result != -EWOULDBLOCK && result != -EINTR) {
            state->failed = true;  // as a send() that failed: the client has gone
            state->outbox.clear();
            continue;
        }
        // What the socket had no room for (or, without a sender, all of it) is sent by itself;
        // an emptied outbox that grew large is given back there too.
        if (!send_outbox(*state) && !state->failed) {
            await_room(std::move(state));
        }
    }
    batch_.clear();
}

void TlsStream::await_room(std::shared_ptr<State> state) {
    if (state->awaits_room) {
        return;
    }
    state->awaits_room = true;
    boost::asio::ip::tcp::socket& socket = state->socket;
    socket.async_wait(boost::asio::socket_base::wait_write,
                      [state = std::move(state)](boost::system::error_code ec) mutable {
                          state->awaits_room = false;
                          // Cancelled: the connection is closing, and shutdown() sends what
                          // it can.
                          if (ec || state->closed || state->outbox.empty()) {
                              return;
                          }
                          if (!send_outbox(*state) && !state->failed) {
                              await_room(std::move(state));
                          }
                      });
}

long TlsStream::bio_control(BIO* bio, int command, long, void*) {
    const Inbox& inbox = static_cast<State*>(BIO_get_data(bio))->inbox;
    switch (command) {
        case BIO_CTRL_FLUSH:
            return 1;  // every write went to the socket, or to the outbox, which is sent alone
        case BIO_CTRL_EOF:
            return inbox.finished() && inbox.unread() == 0 ? 1 : 0;
        case BIO_CTRL_PENDING:
            return static_cast<long>(inbox.unread());
        default:
            return 0;
    }
}

std::size_t TlsStream::Inbox::take(char* out, std::size_t size) {
    const std::size_t count = std::min({size, unread(), static_cast<std::size_t>(INT_MAX)});
    std::memcpy(out, bytes_.data() + begin_, count);
    begin_ += count;
    if (begin_ == end_) {
        begin_ = end_ = 0;  // drained: the next read has the whole inbox
    }
    return count;
}

void TlsStream::shutdown() {
    // A gathered answer may still wait for its batch: it goes first, as far as the socket
    // takes it now.
    if (!state_->outbox.empty() && !state_->failed) {
        send_outbox(*state_);
    }
    ERR_clear_error();
    if (!state_->failed && SSL_is_init_finished(state_->ssl) == 1) {
        SSL_shutdown(state_->ssl);
    }
    ERR_clear_error();
    // close() sends what is queued and then the FIN, as a shutdown first would.
    boost::system::error_code ignored;
    state_->socket.close(ignored);
    state_->closed = true;
}

}  // namespace mdadmit::server
