#pragma once

#include <cerrno>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace mdadmit::server {

// Sends to several sockets in one system call: an io_uring submission of one send each.
//
// Why: a send that wakes a client's thread on the sender's CPU switches to that thread when the
// sender returns to user space. Answers written with one send() each are cut apart by a switch
// each, and the client is woken once per answer; in one submission the kernel takes every
// answer before the sender returns, and the client wakes once to all of them
// (bench/RESULTS.md, twenty-third run).
class BatchSender {
  public:
    struct Send {
        int socket = -1;
        std::string_view bytes;
        // After send_all: how many bytes the socket took, or -errno (-EAGAIN when it could
        // take none without waiting). Until then -EAGAIN: not sent.
        long result = -EAGAIN;
    };

    // The calling thread's sender, made on its first call. Null where the kernel refuses
    // io_uring (too old, turned off with kernel.io_uring_disabled, or denied by a seccomp
    // profile, as container runtimes' defaults often do), on every call after that too: the
    // caller then sends one by one.
    static BatchSender* of_this_thread();
    // Whether the kernel lets this process use io_uring: what of_this_thread() will find, for
    // the log at start-up (it sets up a ring and closes it again).
    static bool offered();

    // Sends each without waiting and without SIGPIPE, and sets its result. The sends of one
    // socket must not be given twice in one call: the kernel may take them in any order.
    void send_all(std::span<Send> sends);

    ~BatchSender();
    BatchSender(const BatchSender&) = delete;
    BatchSender& operator=(const BatchSender&) = delete;

  private:
    struct Ring;
    explicit BatchSender(std::unique_ptr<Ring> ring);
    std::unique_ptr<Ring> ring_;
    // A submission the kernel did not take whole leaves entries in the ring that a later one
    // would send from stale memory: the ring is not entered again, and the thread's sender
    // is null from then on.
    bool broken_ = false;
};

}  // namespace mdadmit::server
