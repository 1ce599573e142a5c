#pragma once

#include <memory>
#include <mutex>

#include "mdadmit/rules/instance_type.hpp"

namespace mdadmit::server {

// The InstanceTypes requests are judged with: loaded once from a file, or refreshed from the
// Kubernetes API in the background. A request takes the snapshot current when it starts.
class InstanceTypeStore {
  public:
    explicit InstanceTypeStore(rules::InstanceTypes initial = {})
        : current_(std::make_shared<const rules::InstanceTypes>(std::move(initial))) {}

    std::shared_ptr<const rules::InstanceTypes> current() const {
        const std::lock_guard lock(mutex_);
        return current_;
    }
    void replace(rules::InstanceTypes types) {
        auto next = std::make_shared<const rules::InstanceTypes>(std::move(types));
        const std::lock_guard lock(mutex_);
        current_ = std::move(next);
    }

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<const rules::InstanceTypes> current_;
};

}  // namespace mdadmit::server
