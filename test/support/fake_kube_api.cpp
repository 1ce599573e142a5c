#include "fake_kube_api.hpp"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <future>
#include <vector>

namespace mdadmit::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view group = "/apis/worker.gpustack.ai/";

struct Event {
    long long version = 0;
    std::string text;  // the event line, without its newline
};

struct Collection {
    std::map<std::string, std::string> objects;  // namespace/name -> JSON
    std::vector<Event> events;
    long long forgotten_before = 0;  // a watch from an older version gets 410
};

using Stream = beast::ssl_stream<beast::tcp_stream>;

std::string status_json(int code, std::string_view message) {
    return json::serialize(json::object{{"kind", "Status"}, {"code", code}, {"message", message}});
}

std::map<std::string, std::string> query_of(std::string_view query) {
    std::map<std::string, std::string> out;
    while (!query.empty()) {
        const auto end = query.find('&');
        const auto pair = query.substr(0, end);
        const auto equals = pair.find('=');
        out[std::string(pair.substr(0, equals))] =
            equals == std::string_view::npos ? "" : std::string(pair.substr(equals + 1));
        query.remove_prefix(end == std::string_view::npos ? query.size() : end + 1);
    }
    return out;
}

}  // namespace

struct FakeKubeApi::State {
    asio::io_context io;
    asio::ssl::context tls{asio::ssl::context::tls_server};
    asio::ip::tcp::acceptor acceptor{io};
    long long version = 1;
    std::map<std::string, Collection> collections;
    std::vector<asio::steady_timer*> waiting;  // watches waiting for news
    long long drops = 0;                       // watches end when this moves

    void wake() {
        for (auto* timer : waiting) {
            timer->cancel();
        }
    }

    void record(const std::string& collection, std::string_view type, json::value object) {
        const long long at = ++version;
        object.as_object()["metadata"].as_object()["resourceVersion"] = std::to_string(at);
        collections[collection].events.push_back(
            {at, json::serialize(json::object{{"type", type}, {"object", object}})});
        wake();
    }

    // POST to <prefix>/namespaces/<ns>/<resource>, PUT and DELETE to .../<resource>/<name>,
    // answered as the API server does: 201 or 200 with the object as stored, 409 for a name
    // taken or a stale metadata.resourceVersion, 404 for none.
    std::pair<http::status, std::string> write(http::verb method, const std::string& path,
                                               const std::string& body) {
        const auto at = path.find("/namespaces/");
        std::vector<std::string> parts;
        for (std::size_t start = at + 12; start <= path.size();) {
            const auto slash = std::min(path.find('/', start), path.size());
            parts.push_back(path.substr(start, slash - start));
            start = slash + 1;
        }
        if (at == std::string::npos || parts.size() < 2) {
            return {http::status::not_found, status_json(404, "not found")};
        }
        const std::string collection = path.substr(0, at) + "/" + parts[1];
        auto& objects = collections[collection].objects;
        boost::system::error_code ec;
        json::value object = json::parse(body, ec);
        if (method != http::verb::delete_ && (ec || !object.is_object())) {
            return {http::status::bad_request, status_json(400, "not a JSON object")};
        }
        const json::value* metadata =
            object.is_object() ? object.as_object().if_contains("metadata") : nullptr;
        const json::value* given_name = metadata != nullptr && metadata->is_object()
                                            ? metadata->as_object().if_contains("name")
                                            : nullptr;
        if (method != http::verb::delete_ &&
            (given_name == nullptr || !given_name->is_string() || given_name->as_string().empty() ||
             (method == http::verb::put && parts.size() > 2 &&
              given_name->as_string() != parts[2]))) {
            return {http::status::unprocessable_entity,
                    status_json(422, "metadata.name: missing, or not the name in the path")};
        }
        const std::string name = method == http::verb::post
                                     ? std::string(given_name->as_string())
                                     : (parts.size() > 2 ? parts[2] : std::string());
        const std::string key = parts[0] + "/" + name;
        const auto it = objects.find(key);
        if (method == http::verb::post && it != objects.end()) {
            return {http::status::conflict, status_json(409, "already exists")};
        }
        if (method != http::verb::post && it == objects.end()) {
            return {http::status::not_found, status_json(404, "not found")};
        }
        if (method == http::verb::delete_) {
            json::value old = json::parse(it->second);
            objects.erase(it);
            record(collection, "DELETED", old);
            return {http::status::ok, json::serialize(old)};
        }
        if (method == http::verb::put) {
            const json::value stored = json::parse(it->second);
            const json::value* sent = metadata->as_object().if_contains("resourceVersion");
            // As for custom resources: an update names the version it replaces.
            if (sent == nullptr || !sent->is_string() || sent->as_string().empty()) {
                return {http::status::unprocessable_entity,
                        status_json(422, "metadata.resourceVersion: must be specified")};
            }
            if (*sent != stored.at("metadata").at("resourceVersion")) {
                return {http::status::conflict, status_json(409, "the object has been modified")};
            }
        }
        record(collection, method == http::verb::post ? "ADDED" : "MODIFIED", object);
        objects[key] =
            json::serialize(json::parse(collections[collection].events.back().text).at("object"));
        return {method == http::verb::post ? http::status::created : http::status::ok,
                objects[key]};
    }

    asio::awaitable<void> watch(Stream& stream, const std::string& collection,
                                const std::map<std::string, std::string>& query) {
        const long long from = std::atoll(
            query.count("resourceVersion") != 0 ? query.at("resourceVersion").c_str() : "0");
        const auto ends = std::chrono::steady_clock::now() +
                          std::chrono::seconds(query.count("timeoutSeconds") != 0
                                                   ? std::atoll(query.at("timeoutSeconds").c_str())
                                                   : 300);
        http::response<http::empty_body> header{http::status::ok, 11};
        header.set(http::field::content_type, "application/json");
        header.chunked(true);
        http::response_serializer<http::empty_body> serializer{header};
        auto [header_ec, written] =
            co_await http::async_write_header(stream, serializer, use_tuple);
        if (header_ec) {
            co_return;
        }
        if (from < collections[collection].forgotten_before) {
            const std::string expired =
                json::serialize(json::object{
                    {"type", "ERROR"}, {"object", json::parse(status_json(410, "too old"))}}) +
                "\n";
            co_await asio::async_write(stream, http::make_chunk(asio::buffer(expired)), use_tuple);
            co_await asio::async_write(stream, http::make_chunk_last(), use_tuple);
            co_return;
        }
        const long long drops_at_start = drops;
        long long sent = from;
        for (;;) {
            std::string lines;
            for (const auto& event : collections[collection].events) {
                if (event.version > sent) {
                    lines += event.text + "\n";
                    sent = event.version;
                }
            }
            if (!lines.empty()) {
                auto [ec, n] = co_await asio::async_write(
                    stream, http::make_chunk(asio::buffer(lines)), use_tuple);
                if (ec) {
                    co_return;
                }
            }
            if (drops != drops_at_start) {
                // A broken connection: no last chunk.
                beast::get_lowest_layer(stream).close();
                co_return;
            }
            if (std::chrono::steady_clock::now() >= ends) {
                break;
            }
            if (!lines.empty()) {
                // An event recorded while the lines were written woke no timer: look again
                // before waiting.
                continue;
            }
            asio::steady_timer timer(io, ends);
            waiting.push_back(&timer);
            co_await timer.async_wait(use_tuple);
            std::erase(waiting, &timer);
        }
        co_await asio::async_write(stream, http::make_chunk_last(), use_tuple);
    }

    // Every connection: requests until the client leaves; a watch ends its connection.
    asio::awaitable<void> serve(FakeKubeApi& api, asio::ip::tcp::socket socket) {
        Stream stream(std::move(socket), tls);
        auto [handshake_ec] =
            co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
        if (handshake_ec) {
            co_return;
        }
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> request;
            auto [read_ec, read] = co_await http::async_read(stream, buffer, request, use_tuple);
            if (read_ec) {
                co_return;
            }
            const std::string target(request.target());
            const std::string path = target.substr(0, target.find('?'));
            const auto query =
                query_of(target.find('?') == std::string::npos
                             ? std::string_view()
                             : std::string_view(target).substr(target.find('?') + 1));
            const bool watching = query.count("watch") != 0 && query.at("watch") == "1";
            // Every resource of every group is served cluster-wide, an empty one as an empty
            // list (label selectors are not applied).
            const bool reading = request.method() == http::verb::get;
            const bool is_collection =
                path.rfind("/apis/", 0) == 0 && path.find("/namespaces/") == std::string::npos;
            std::string token;
            {
                const std::lock_guard lock(api.mutex_);
                token = api.token_;
                if (!reading) {
                    ++api.writes_;
                } else if (is_collection) {
                    ++(watching ? api.watches_ : api.lists_)[path];
                } else if (path.rfind(std::string(group), 0) == 0) {
                    ++api.gets_;
                }
            }
            if (const auto delay = api.delay_ms_.load(); delay > 0) {
                asio::steady_timer pause(io, std::chrono::milliseconds(delay));
                co_await pause.async_wait(use_tuple);
            }
            http::response<http::string_body> response{http::status::ok, 11};
            response.set(http::field::content_type, "application/json");
            if (request[http::field::authorization] != "Bearer " + token) {
                response.result(http::status::unauthorized);
                response.body() = status_json(401, "Unauthorized");
            } else if (!reading) {
                const auto [status, body] = write(request.method(), path, request.body());
                response.result(status);
                response.body() = body;
            } else if (is_collection && watching) {
                co_await watch(stream, path, query);
                co_return;
            } else if (is_collection) {
                json::array items;
                for (const auto& [key, object] : collections[path].objects) {
                    items.push_back(json::parse(object));
                }
                response.body() = json::serialize(
                    json::object{{"kind", "List"},
                                 {"metadata", {{"resourceVersion", std::to_string(version)}}},
                                 {"items", std::move(items)}});
            } else if (const auto at = path.find("/namespaces/"); at != std::string::npos) {
                // <group>/namespaces/<ns>/<resource>/<name>
                const std::string rest = path.substr(at + 12);
                const auto first = rest.find('/');
                const auto second = rest.find('/', first + 1);
                const std::string collection =
                    path.substr(0, at) + "/" + rest.substr(first + 1, second - first - 1);
                const std::string key = rest.substr(0, first) + "/" + rest.substr(second + 1);
                const auto& objects = collections[collection].objects;
                if (const auto it = objects.find(key); it != objects.end()) {
                    response.body() = it->second;
                } else {
                    response.result(http::status::not_found);
                    response.body() = status_json(404, "not found");
                }
            } else {
                response.result(http::status::not_found);
                response.body() = status_json(404, "not found");
            }
            response.keep_alive(request.keep_alive());
            response.prepare_payload();
            auto [write_ec, written] = co_await http::async_write(stream, response, use_tuple);
            if (write_ec || !request.keep_alive()) {
                co_return;
            }
        }
    }

    asio::awaitable<void> accept(FakeKubeApi& api) {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
            if (ec) {
                co_return;
            }
            asio::co_spawn(io, serve(api, std::move(socket)), asio::detached);
        }
    }
};

FakeKubeApi::FakeKubeApi(std::string token)
    : token_(std::move(token)), state_(std::make_unique<State>()) {
    const std::string prefix = std::filesystem::temp_directory_path().string() + "/fake-kube-" +
                               std::to_string(::getpid()) + "-" +
                               std::to_string(reinterpret_cast<std::uintptr_t>(this));
    ca_file_ = prefix + "-ca.crt";
    cert_file_ = prefix + "-tls.crt";
    key_file_ = prefix + "-tls.key";
    const PemPair serving = ca_.issue("kubernetes.default.svc");
    write_file(ca_file_, ca_.pem().certificate);
    write_file(cert_file_, serving.certificate);
    write_file(key_file_, serving.key);
    state_->tls.use_certificate_chain_file(cert_file_);
    state_->tls.use_private_key_file(key_file_, asio::ssl::context::pem);
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(endpoint.protocol());
    state_->acceptor.bind(endpoint);
    state_->acceptor.listen();
    port_ = state_->acceptor.local_endpoint().port();

    asio::co_spawn(state_->io, state_->accept(*this), asio::detached);
    thread_ = std::thread([this] { state_->io.run(); });
}

FakeKubeApi::~FakeKubeApi() {
    state_->io.stop();
    thread_.join();
}

void FakeKubeApi::on_io(std::function<void()> change) {
    std::promise<void> done;
    asio::post(state_->io, [&] {
        change();
        done.set_value();
    });
    done.get_future().wait();
}

void FakeKubeApi::put(const std::string& collection, const std::string& object_json) {
    on_io([&] {
        json::value object = json::parse(object_json);
        const std::string key = std::string(object.at("metadata").as_object().contains("namespace")
                                                ? object.at("metadata").at("namespace").as_string()
                                                : "") +
                                "/" + std::string(object.at("metadata").at("name").as_string());
        const bool existed = state_->collections[collection].objects.count(key) != 0;
        state_->record(collection, existed ? "MODIFIED" : "ADDED", object);
        state_->collections[collection].objects[key] = json::serialize(
            json::parse(state_->collections[collection].events.back().text).at("object"));
    });
}

void FakeKubeApi::put_unannounced(const std::string& collection, const std::string& object_json) {
    on_io([&] {
        const json::value object = json::parse(object_json);
        const std::string key = std::string(object.at("metadata").at("namespace").as_string()) +
                                "/" + std::string(object.at("metadata").at("name").as_string());
        state_->collections[collection].objects[key] = object_json;
    });
}

void FakeKubeApi::remove(const std::string& collection, const std::string& namespace_name,
                         const std::string& name) {
    on_io([&] {
        auto& objects = state_->collections[collection].objects;
        const auto it = objects.find(namespace_name + "/" + name);
        if (it == objects.end()) {
            return;
        }
        json::value object = json::parse(it->second);
        objects.erase(it);
        state_->record(collection, "DELETED", std::move(object));
    });
}

void FakeKubeApi::bookmark(const std::string& collection) {
    on_io([&] {
        state_->record(collection, "BOOKMARK",
                       json::object{{"kind", "ModelDeployment"}, {"metadata", json::object{}}});
    });
}

void FakeKubeApi::forget_history(const std::string& collection) {
    on_io([&] {
        Collection& c = state_->collections[collection];
        c.events.clear();
        c.forgotten_before = ++state_->version;
        state_->wake();
    });
}

void FakeKubeApi::drop_watches() {
    on_io([&] {
        ++state_->drops;
        state_->wake();
    });
}

void FakeKubeApi::set_token(const std::string& token) {
    const std::lock_guard lock(mutex_);
    token_ = token;
}

int FakeKubeApi::lists(const std::string& collection) const {
    const std::lock_guard lock(mutex_);
    const auto it = lists_.find(collection);
    return it == lists_.end() ? 0 : it->second;
}

int FakeKubeApi::watches(const std::string& collection) const {
    const std::lock_guard lock(mutex_);
    const auto it = watches_.find(collection);
    return it == watches_.end() ? 0 : it->second;
}

int FakeKubeApi::writes() const {
    const std::lock_guard lock(mutex_);
    return writes_;
}

std::optional<std::string> FakeKubeApi::object(const std::string& collection,
                                               const std::string& namespace_name,
                                               const std::string& name) {
    std::optional<std::string> out;
    on_io([&] {
        const auto& objects = state_->collections[collection].objects;
        if (const auto it = objects.find(namespace_name + "/" + name); it != objects.end()) {
            out = it->second;
        }
    });
    return out;
}

int FakeKubeApi::gets() const {
    const std::lock_guard lock(mutex_);
    return gets_;
}

}  // namespace mdadmit::test
