#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mdadmit::server {

// A metric family that any thread updates without taking a lock: each thread counts in a shard
// of its own, made the first time it counts in this family, and a scrape reads every shard.
// Within a shard the owning thread is the only writer, so a cell is published by writing its
// label set first and then its slot count with release order; readers load the count with
// acquire order and never see a half-written label set. A shard holds `capacity` label sets;
// further ones share the family's overflow labels, so no input can grow a shard. A Cell has
// `bool empty() const`.
template <typename Cell, std::size_t capacity>
class PerThreadFamily {
  public:
    explicit PerThreadFamily(std::string overflow_labels)
        : overflow_labels_(std::move(overflow_labels)) {}
    PerThreadFamily(const PerThreadFamily&) = delete;
    PerThreadFamily& operator=(const PerThreadFamily&) = delete;

    // This thread's cell for the label set; only the calling thread may write it.
    Cell& cell(std::string_view labels) {
        Shard& shard = local_shard();
        const std::size_t used = shard.used.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < used; ++i) {
            if (shard.slots[i].labels == labels) {
                return shard.slots[i].cell;
            }
        }
        if (used == capacity) {
            return shard.overflow;
        }
        shard.slots[used].labels.assign(labels);
        shard.used.store(used + 1, std::memory_order_release);
        return shard.slots[used].cell;
    }

    // Calls visit(labels, cell) for every published cell of every shard, and for the overflow
    // cell of a shard that used it; a label set appears once per thread that counted it.
    template <typename Visit>
    void for_each(Visit&& visit) const {
        const std::lock_guard lock(shards_mutex_);
        for (const auto& shard : shards_) {
            const std::size_t used = shard->used.load(std::memory_order_acquire);
            for (std::size_t i = 0; i < used; ++i) {
                visit(std::string_view(shard->slots[i].labels), shard->slots[i].cell);
            }
            if (!shard->overflow.empty()) {
                visit(std::string_view(overflow_labels_), shard->overflow);
            }
        }
    }

  private:
    struct Slot {
        std::string labels;
        Cell cell;
    };
    struct Shard {
        std::array<Slot, capacity> slots;
        std::atomic<std::size_t> used{0};
        Cell overflow;
    };

    // The calling thread's shard. Threads remember their shards by the family's id, which is
    // never reused, so a family made at the address of a destroyed one is not confused with it.
    Shard& local_shard() {
        thread_local std::vector<std::pair<std::uint64_t, Shard*>> known;
        for (const auto& [id, shard] : known) {
            if (id == id_) {
                return *shard;
            }
        }
        auto shard = std::make_unique<Shard>();
        Shard* const mine = shard.get();
        {
            const std::lock_guard lock(shards_mutex_);
            shards_.push_back(std::move(shard));
        }
        known.emplace_back(id_, mine);
        return *mine;
    }

    static std::uint64_t next_id() {
        static std::atomic<std::uint64_t> ids{0};
        return ids.fetch_add(1, std::memory_order_relaxed);
    }

    const std::uint64_t id_ = next_id();
    const std::string overflow_labels_;
    mutable std::mutex shards_mutex_;  // taken when a thread first counts here, and at scrape
    std::vector<std::unique_ptr<Shard>> shards_;
};

// Adds to a counter that only the calling thread writes (see PerThreadFamily).
inline void add_owned(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

}  // namespace mdadmit::server
