#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "test_certificates.hpp"

namespace mdadmit::test {

// A stand-in for the Kubernetes API server on loopback: TLS with a certificate of its own
// CA, a bearer token check, keep-alive connections, and collections that answer LIST, WATCH
// (chunked events from a resourceVersion, bookmarks, 410 for a forgotten one, the server-side
// timeout), GET of one object, and writes (POST, PUT with optimistic concurrency, DELETE) of
// namespaced objects in any group. It can be made slow, and its watches can be dropped.
class FakeKubeApi {
  public:
    explicit FakeKubeApi(std::string token);
    ~FakeKubeApi();

    unsigned short port() const { return port_; }
    const std::string& ca_file() const { return ca_file_; }

    // Adds or replaces an object of a collection (an ADDED or MODIFIED event); a namespaced
    // object also answers a GET at <group>/namespaces/<ns>/<resource>/<name>.
    void put(const std::string& collection, const std::string& object_json);
    // Adds an object that GETs and lists see but no open watch has been told of yet, as when
    // a watch event is still on its way.
    void put_unannounced(const std::string& collection, const std::string& object_json);
    // Deletes an object (a DELETED event).
    void remove(const std::string& collection, const std::string& namespace_name,
                const std::string& name);
    void bookmark(const std::string& collection);
    // Forgets the events so far: a watch from an older version gets 410 Gone.
    void forget_history(const std::string& collection);
    // Ends every open watch as a broken connection would.
    void drop_watches();
    void set_token(const std::string& token);
    void set_delay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }

    int lists(const std::string& collection) const;
    int watches(const std::string& collection) const;
    int gets() const;    // GETs of single objects
    int writes() const;  // POST, PUT and DELETE requests
    // An object as stored (with its resourceVersion), nothing when there is none.
    std::optional<std::string> object(const std::string& collection,
                                      const std::string& namespace_name, const std::string& name);

  private:
    struct State;
    void on_io(std::function<void()> change);

    TestCa ca_{"fake API CA"};
    std::string ca_file_;
    std::string cert_file_;
    std::string key_file_;
    unsigned short port_ = 0;
    std::atomic<long long> delay_ms_{0};
    mutable std::mutex mutex_;  // the counters and the token
    std::string token_;
    std::map<std::string, int> lists_;
    std::map<std::string, int> watches_;
    int gets_ = 0;
    int writes_ = 0;
    std::unique_ptr<State> state_;
    std::thread thread_;
};

}  // namespace mdadmit::test
