#include "tls_stream.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <climits>
#include <cstring>

namespace mdadmit::server {

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

long TlsStream::bio_control(BIO* bio, int command, long, void*) {
    const Inbox& inbox = static_cast<State*>(BIO_get_data(bio))->inbox;
    switch (command) {
        case BIO_CTRL_FLUSH:
            return 1;  // every write went to the socket
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

void TlsStream::acknowledge_now(State& state) {
    // Linux leaves quick-ACK mode again by itself; failing costs only the delay.
    const int on = 1;
    setsockopt(state.socket.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

void TlsStream::shutdown() {
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
