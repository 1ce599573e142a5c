#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "cluster_view.hpp"
#include "instance_type_store.hpp"
#include "log.hpp"
#include "mdadmit/admission/audit.hpp"
#include "metrics.hpp"
#include "policy_reporter.hpp"
#include "readiness.hpp"

namespace mdadmit::server {

// The periodic audit, as Gatekeeper's audit controller does it: every interval, once the
// cluster view has synced, each stored ModelDeployment is judged with the current rules as an
// UPDATE against itself (admission::audit_object, as `mdadmit audit` judges), and the metrics
// show what the rules find, and would refuse, among the objects already admitted.
class Auditor {
  public:
    Auditor(boost::asio::any_io_executor executor, const rules::Engine& engine,
            const ClusterView& view, const InstanceTypeStore& instance_types,
            const Readiness& readiness, Metrics& metrics, const Log& log,
            std::chrono::milliseconds interval);

    // What one audit found.
    struct Run {
        admission::AuditTally tally;
        std::vector<admission::AuditedObject> objects;
    };

    // After each audit, also publishes PolicyReports (--policy-reports).
    void report_to(std::unique_ptr<PolicyReporter> reporter);
    // Starts the audits on the executor; they run until it stops, or until stop().
    void start();
    // Ends the audits after the one running, and releases the PolicyReport Lease, so that
    // another replica takes over at its next audit rather than when the Lease lapses.
    void stop();
    // One audit now, published to the metrics.
    Run run_once() const;

  private:
    boost::asio::awaitable<void> audit_periodically();

    boost::asio::any_io_executor executor_;
    const rules::Engine& engine_;
    const ClusterView& view_;
    const InstanceTypeStore& instance_types_;
    const Readiness& readiness_;
    Metrics& metrics_;
    const Log& log_;
    std::chrono::milliseconds interval_;
    std::unique_ptr<PolicyReporter> reporter_;
    // The control executor's alone: set by stop(), and the timer the audits sleep on.
    bool stopping_ = false;
    boost::asio::steady_timer* sleeping_ = nullptr;
};

}  // namespace mdadmit::server
