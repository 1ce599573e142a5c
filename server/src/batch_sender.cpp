#include "batch_sender.hpp"

#include <liburing.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace mdadmit::server {

namespace {

// Sends in one submission at most; more go in further submissions.
constexpr unsigned ring_entries = 64;

// IORING_SETUP_SUBMIT_ALL: a send that fails does not stop the ones after it from being
// submitted (Linux 5.18; an older kernel refuses the flag, and sends go one by one).
bool set_up(io_uring& ring) {
    return io_uring_queue_init(ring_entries, &ring, IORING_SETUP_SUBMIT_ALL) == 0;
}

}  // namespace

struct BatchSender::Ring {
    io_uring ring{};
    bool ready = false;
    ~Ring() {
        if (ready) {
            io_uring_queue_exit(&ring);
        }
    }
};

BatchSender::BatchSender(std::unique_ptr<Ring> ring) : ring_(std::move(ring)) {}

BatchSender::~BatchSender() = default;

BatchSender* BatchSender::of_this_thread() {
    thread_local const std::unique_ptr<BatchSender> sender = []() -> std::unique_ptr<BatchSender> {
        auto ring = std::make_unique<Ring>();
        if (!set_up(ring->ring)) {
            return nullptr;
        }
        ring->ready = true;
        return std::unique_ptr<BatchSender>(new BatchSender(std::move(ring)));
    }();
    return sender && !sender->broken_ ? sender.get() : nullptr;
}

bool BatchSender::offered() {
    io_uring ring{};
    if (!set_up(ring)) {
        return false;
    }
    io_uring_queue_exit(&ring);
    return true;
}

void BatchSender::send_all(std::span<Send> sends) {
    io_uring& ring = ring_->ring;
    for (std::size_t first = 0; first < sends.size();) {
        const std::span<Send> part =
            sends.subspan(first, std::min<std::size_t>(ring_entries, sends.size() - first));
        first += part.size();
        // Until a completion says otherwise: not sent, to be sent one by one.
        for (Send& send : part) {
            send.result = -EAGAIN;
        }
        if (broken_) {
            continue;
        }
        // The ring is empty between parts: there is an entry for each send of a part.
        for (std::size_t k = 0; k < part.size(); ++k) {
            io_uring_sqe* entry = io_uring_get_sqe(&ring);
            // MSG_DONTWAIT: a socket that cannot take the bytes now ends its send with -EAGAIN
            // at once, rather than the kernel finishing it later while the wait below waits.
            io_uring_prep_send(entry, part[k].socket, part[k].bytes.data(), part[k].bytes.size(),
                               MSG_DONTWAIT | MSG_NOSIGNAL);
            io_uring_sqe_set_data64(entry, k);
        }
        const auto wanted = static_cast<unsigned>(part.size());
        int submitted = io_uring_submit_and_wait(&ring, wanted);
        while (submitted == -EINTR) {  // interrupted before it took any
            submitted = io_uring_submit_and_wait(&ring, wanted);
        }
        const unsigned taken = submitted > 0 ? static_cast<unsigned>(submitted) : 0;
        broken_ = taken != wanted;
        for (unsigned reaped = 0; reaped < taken;) {
            io_uring_cqe* completion = nullptr;
            const int waited = io_uring_wait_cqe(&ring, &completion);
            if (waited == -EINTR) {
                continue;
            }
            if (waited < 0) {
                broken_ = true;
                break;
            }
            part[io_uring_cqe_get_data64(completion)].result = completion->res;
            io_uring_cqe_seen(&ring, completion);
            ++reaped;
        }
    }
}

}  // namespace mdadmit::server
