#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>

#include "kube_client.hpp"

namespace mdadmit::server {

// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
// the holder renews the Lease; another replica takes it over only when the record it last
// saw has not changed for a whole lease duration (measured on its own monotonic clock, so
// clocks that differ between nodes do not matter); every write carries the resourceVersion
// read, so two replicas cannot both win.
class LeaderLease {
  public:
    LeaderLease(std::string namespace_name, std::string name, std::string identity,
                std::chrono::seconds duration);

    // One round: creates, renews or takes over the Lease as the rules above allow; true
    // while this replica holds it. A failed request counts as not holding it.
    boost::asio::awaitable<bool> try_hold(KubeConnection& connection,
                                          std::chrono::steady_clock::time_point deadline);
    const std::string& identity() const { return identity_; }
    // Gives the Lease up if this replica holds it: an empty holder, which another replica
    // takes at once, as client-go's ReleaseOnCancel does. True when released.
    boost::asio::awaitable<bool> release(KubeConnection& connection,
                                         std::chrono::steady_clock::time_point deadline);
    // Whether the last successful try_hold is still within the lease's duration.
    bool held() const;

  private:
    boost::asio::awaitable<bool> hold(KubeConnection& connection,
                                      std::chrono::steady_clock::time_point deadline);
    std::string path() const;

    std::string namespace_name_;
    std::string name_;
    std::string identity_;
    std::chrono::seconds duration_;
    // The holder and renew time last read, and when this replica first saw them.
    std::string observed_record_;
    std::chrono::steady_clock::time_point observed_at_{};
    std::chrono::steady_clock::time_point held_since_{};  // when the lease was last written
    bool held_ = false;
};

// Now, as a Kubernetes MicroTime: 2026-12-03T10:49:02.123456Z.
std::string micro_time_now();

}  // namespace mdadmit::server
