// Raw bytes of an HTTP request into the server's request handling: the parser with the
// server's header and body limits, the request target, then the routes (admission, health,
// readiness, metrics). Every input is refused by the parser or answered with a status the
// server sends, never a crash.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "check.hpp"
#include "routes.hpp"

namespace {

using namespace mdadmit;
namespace http = boost::beast::http;

struct Server {
    rules::Engine engine = rules::Engine::with_embedded_data();
    server::Metrics metrics;
    server::Readiness readiness;
    server::InstanceTypeStore instance_types;
    admission::Admission admission{engine};
    server::Routes routes{admission,
                          instance_types,
                          readiness,
                          metrics,
                          {64 * 1024, std::chrono::milliseconds(10'000)}};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Server server;
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(server.routes.options().body_limit);
    parser.eager(true);
    boost::system::error_code ec;
    parser.put(boost::asio::buffer(data, size), ec);
    const bool over_limit = ec == http::error::body_limit;
    if ((ec && !over_limit) || !parser.is_header_done()) {
        return 0;  // the session answers 400 or closes
    }
    const auto& request = parser.get();
    const std::string content_type(request[http::field::content_type]);
    const server::HttpRequest parsed{
        request.method_string(), server::parse_target(request.target()), content_type,
        request.body(),          over_limit || !parser.is_done(),        (size % 2) == 0,
        server::Clock::now()};
    auto result = server.routes.handle(parsed);
    const server::HttpResponse response =
        std::holds_alternative<server::HttpResponse>(result)
            ? std::get<server::HttpResponse>(std::move(result))
            : server.routes.complete(std::get<server::PendingResponse>(std::move(result)),
                                     {admission::Lookup::Status::not_found, {}, {}});
    FUZZ_CHECK(response.status >= 200 && response.status < 600, "status %d", response.status);
    return 0;
}
