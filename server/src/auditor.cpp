#include "auditor.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace mdadmit::server {

namespace asio = boost::asio;

Auditor::Auditor(asio::any_io_executor executor, const rules::Engine& engine,
                 const ClusterView& view, const InstanceTypeStore& instance_types,
                 const Readiness& readiness, Metrics& metrics, const Log& log,
                 std::chrono::milliseconds interval)
    : executor_(std::move(executor)),
      engine_(engine),
      view_(view),
      instance_types_(instance_types),
      readiness_(readiness),
      metrics_(metrics),
      log_(log),
      interval_(interval) {}

void Auditor::start() {
    asio::co_spawn(executor_, audit_periodically(), asio::detached);
}

void Auditor::report_to(std::unique_ptr<PolicyReporter> reporter) {
    reporter_ = std::move(reporter);
}

Auditor::Run Auditor::run_once() const {
    const auto started = std::chrono::steady_clock::now();
    const auto types = instance_types_.current();
    Run run;
    for (const auto& object : view_.model_deployments()) {
        auto evaluation = admission::audit_object(engine_, *object, types.get());
        run.tally.add(evaluation);
        run.objects.push_back(admission::audited(*object, std::move(evaluation)));
    }
    const admission::AuditTally& tally = run.tally;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double finished =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    metrics_.set_audit(tally, finished, seconds);
    log_.write(LogLevel::info, "audit finished",
               {{"objects", std::to_string(tally.objects)},
                {"refused", std::to_string(tally.refused)},
                {"seconds", std::to_string(seconds)}});
    return run;
}

void Auditor::stop() {
    asio::post(executor_, [this] {
        stopping_ = true;
        if (sleeping_ != nullptr) {
            sleeping_->cancel();
        }
    });
}

asio::awaitable<void> Auditor::audit_periodically() {
    asio::steady_timer timer(executor_);
    boost::system::error_code ec;
    const auto sleep = [&](std::chrono::milliseconds duration) {
        timer.expires_after(duration);
        sleeping_ = &timer;
        return timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    };
    // An audit of a cache that has not listed the cluster yet would report a clean cluster.
    while (!readiness_.cluster_synced && !stopping_) {
        co_await sleep(std::chrono::milliseconds(100));
        sleeping_ = nullptr;
    }
    while (!stopping_) {
        const Run run = run_once();
        if (reporter_ != nullptr) {
            co_await reporter_->publish(run.objects);
        }
        if (stopping_) {
            break;
        }
        co_await sleep(interval_);
        sleeping_ = nullptr;
    }
    // Publishing and releasing share one connection, so the release waits for the audit.
    if (reporter_ != nullptr) {
        co_await reporter_->release();
    }
}

}  // namespace mdadmit::server
