#include "tls_stream.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace mdadmit::server {

std::optional<TlsStream> TlsStream::accept(boost::asio::ip::tcp::socket socket, SSL_CTX* context) {
    SSL* ssl = SSL_new(context);
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    if (ssl == nullptr || ec || SSL_set_fd(ssl, socket.native_handle()) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return std::nullopt;
    }
    SSL_set_accept_state(ssl);
    // One read() takes whatever the client has sent, not a record header and then its body.
    SSL_set_read_ahead(ssl, 1);
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                          SSL_MODE_RELEASE_BUFFERS);
    return TlsStream(std::make_shared<State>(std::move(socket), ssl));
}

void TlsStream::acknowledge_now(SSL* ssl) {
    // Linux leaves quick-ACK mode again by itself; failing costs only the delay.
    const int on = 1;
    setsockopt(SSL_get_fd(ssl), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
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
