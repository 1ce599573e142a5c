#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube_client.hpp"
#include "leader_lease.hpp"
#include "log.hpp"
#include "mdadmit/admission/policy_report.hpp"

namespace mdadmit::server {

// Publishes the audit as one PolicyReport per namespace (--policy-reports), written only by
// the replica that holds the Lease. A report is written when its content changes: created
// for a namespace with ModelDeployments, updated as they change, emptied when the last
// violation is fixed or the last object is gone.
class PolicyReporter {
  public:
    PolicyReporter(boost::asio::any_io_executor executor, std::shared_ptr<const KubeApi> api,
                   const rules::RuleData& data, LeaderLease lease, const Log& log);

    boost::asio::awaitable<void> publish(const std::vector<admission::AuditedObject>& objects);
    // Gives the Lease up when this replica holds it (at shutdown).
    boost::asio::awaitable<void> release();

  private:
    enum class Written { written, unneeded, failed };

    // The reports this webhook wrote (its label), from any replica or an earlier run.
    boost::asio::awaitable<bool> adopt_existing_reports();
    // Creates or replaces a namespace's report; with no objects left there and no report,
    // nothing is needed.
    boost::asio::awaitable<Written> write(const std::string& namespace_name,
                                          const boost::json::object& report, bool has_objects);

    KubeConnection connection_;
    const rules::RuleData& data_;
    LeaderLease lease_;
    const Log& log_;
    bool leading_ = false;
    // namespace -> the report content last written (timestamps zeroed); "" for a report
    // found in the cluster, to be compared afresh
    std::map<std::string, std::string> written_;
};

}  // namespace mdadmit::server
