// BatchSender: several sockets' bytes in one io_uring submission, each send's result reported
// as send() would report it, without ever waiting for a socket.
#include "batch_sender.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

namespace mdadmit::test {
namespace {

using server::BatchSender;

// Both ends of a local stream socket, closed with the pair.
struct SocketPair {
    SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0); }
    ~SocketPair() {
        for (const int end : ends) {
            if (end >= 0) {
                ::close(end);
            }
        }
    }
    SocketPair(const SocketPair&) = delete;
    SocketPair& operator=(const SocketPair&) = delete;
    // Everything the peer of ends[0] can read now.
    std::string received() {
        std::string bytes;
        char chunk[65536];
        ssize_t n = 0;
        while ((n = ::recv(ends[1], chunk, sizeof chunk, MSG_DONTWAIT)) > 0) {
            bytes.append(chunk, static_cast<std::size_t>(n));
        }
        return bytes;
    }
    int ends[2] = {-1, -1};
};

// The thread's sender; the tests are skipped where the kernel refuses io_uring.
class BatchSenderTest : public testing::Test {
  protected:
    void SetUp() override {
        sender = BatchSender::of_this_thread();
        if (sender == nullptr) {
            GTEST_SKIP() << "the kernel refuses io_uring here: answers are sent one by one";
        }
    }
    BatchSender* sender = nullptr;
};

// More sockets than one submission holds (64): each gets its own bytes, and its result is
// what it took.
TEST_F(BatchSenderTest, SendsToEverySocketInOneCallAndSaysWhatEachTook) {
    std::vector<SocketPair> pairs(150);
    std::vector<std::string> payloads;
    std::vector<BatchSender::Send> sends;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        payloads.push_back("answer " + std::to_string(k) + std::string(k * 7, 'x'));
    }
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        sends.push_back({pairs[k].ends[0], payloads[k]});
    }
    sender->send_all(sends);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        EXPECT_EQ(sends[k].result, static_cast<long>(payloads[k].size())) << k;
        EXPECT_EQ(pairs[k].received(), payloads[k]) << k;
    }
}

// A socket without room for all the bytes takes what it can, and one without room for any
// says -EAGAIN, at once, while the other sockets of the call are still served.
TEST_F(BatchSenderTest, ASocketWithoutRoomTakesWhatItCanWithoutWaiting) {
    SocketPair full;
    SocketPair other;
    const std::string large(8 * 1024 * 1024, 'a');
    const std::string small = "fits";
    std::vector<BatchSender::Send> sends{{full.ends[0], large}, {other.ends[0], small}};
    const auto started = std::chrono::steady_clock::now();
    sender->send_all(sends);
    EXPECT_GT(sends[0].result, 0);
    EXPECT_LT(sends[0].result, static_cast<long>(large.size()));
    EXPECT_EQ(sends[1].result, static_cast<long>(small.size()));
    EXPECT_EQ(other.received(), small);

    std::vector<BatchSender::Send> again{{full.ends[0], large}};
    sender->send_all(again);
    EXPECT_EQ(again[0].result, -EAGAIN);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
    EXPECT_EQ(full.received().size(), static_cast<std::size_t>(sends[0].result));
}

// A peer that has gone is an error for that socket alone, not a SIGPIPE for the process.
TEST_F(BatchSenderTest, APeerThatHasGoneIsAnErrorForItsSocketAlone) {
    SocketPair gone;
    SocketPair there;
    ::close(gone.ends[1]);
    gone.ends[1] = -1;
    std::vector<BatchSender::Send> sends{{gone.ends[0], "late"}, {there.ends[0], "on time"}};
    sender->send_all(sends);
    EXPECT_EQ(sends[0].result, -EPIPE);
    EXPECT_EQ(sends[1].result, 7);
    EXPECT_EQ(there.received(), "on time");
}

}  // namespace
}  // namespace mdadmit::test
