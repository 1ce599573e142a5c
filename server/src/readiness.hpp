#pragma once

#include <atomic>
#include <string>

namespace mdadmit::server {

// What /readyz reports: ready only when the certificate and rule data are loaded, the TLS
// listener accepts, the cluster cache (when the API is read) has synced, and the process is
// not shutting down.
class Readiness {
  public:
    std::atomic<bool> rules_loaded{false};
    std::atomic<bool> certificate_loaded{false};
    std::atomic<bool> tls_accepting{false};
    std::atomic<bool> shutting_down{false};
    // False while a cache of the cluster has not yet listed what it watches.
    std::atomic<bool> cluster_synced{true};

    bool ready() const {
        return rules_loaded && certificate_loaded && tls_accepting && cluster_synced &&
               !shutting_down;
    }

    // "ok", or what is missing, one reason per line.
    std::string report() const {
        if (ready()) {
            return "ok\n";
        }
        std::string out;
        if (!rules_loaded)
            out += "rule data not loaded\n";
        if (!certificate_loaded)
            out += "serving certificate not loaded\n";
        if (!tls_accepting)
            out += "TLS listener not accepting\n";
        if (!cluster_synced)
            out += "cluster cache not synced\n";
        if (shutting_down)
            out += "shutting down\n";
        return out;
    }
};

}  // namespace mdadmit::server
