#include "cert_reloader.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace mdadmit::server {

namespace {

std::string read_all(const std::string& path) {
    if (path.empty()) {
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Writes to several files settle before they are read together.
constexpr std::chrono::milliseconds settle_time{200};

}  // namespace

CertReloader::CertReloader(boost::asio::io_context& io, TlsSettings settings,
                           CertificateStore& store, Metrics& metrics,
                           std::chrono::milliseconds poll_interval, Log log)
    : io_(io),
      settings_(std::move(settings)),
      store_(store),
      metrics_(metrics),
      poll_interval_(poll_interval),
      log_(std::move(log)),
      poll_timer_(io),
      settle_timer_(io) {}

CertReloader::~CertReloader() = default;

std::string CertReloader::fingerprint() const {
    return read_all(settings_.cert_file) + '\0' + read_all(settings_.key_file) + '\0' +
           read_all(settings_.client_ca_file);
}

rules::Result<bool> CertReloader::load(const std::string& fingerprint) {
    auto context = make_tls_context(settings_);
    if (!context) {
        return context.error();
    }
    store_.replace(std::move(context).value());
    loaded_fingerprint_ = fingerprint;
    if (auto expiry = certificate_expiry(settings_.cert_file)) {
        metrics_.set_certificate_expiry(expiry.value());
    }
    return true;
}

rules::Result<bool> CertReloader::load_initial() {
    return load(fingerprint());
}

void CertReloader::start() {
    watch_directories();
    schedule_poll();
}

void CertReloader::stop() {
    stopped_ = true;
    poll_timer_.cancel();
    settle_timer_.cancel();
    if (inotify_) {
        boost::system::error_code ignored;
        inotify_->close(ignored);
    }
}

void CertReloader::check() {
    if (stopped_) {
        return;
    }
    const std::string current = fingerprint();
    if (current == loaded_fingerprint_ || current == refused_fingerprint_) {
        return;
    }
    if (auto loaded = load(current); !loaded) {
        // Remembered so a bad file is reported once, not on every poll.
        refused_fingerprint_ = current;
        metrics_.count_certificate_reload(false);
        log_(false, "certificate reload refused, still serving the previous one: " +
                        loaded.error().message);
        return;
    }
    refused_fingerprint_.clear();
    metrics_.count_certificate_reload(true);
    log_(true, "serving certificate reloaded from " + settings_.cert_file);
}

void CertReloader::watch_directories() {
    const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) {
        log_(false, "inotify unavailable, certificate changes are found by polling only");
        return;
    }
    std::set<std::string> directories;
    for (const auto* file :
         {&settings_.cert_file, &settings_.key_file, &settings_.client_ca_file}) {
        if (!file->empty()) {
            directories.insert(std::filesystem::absolute(*file).parent_path().string());
        }
    }
    for (const auto& directory : directories) {
        inotify_add_watch(
            fd, directory.c_str(),
            IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB | IN_MODIFY);
    }
    inotify_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
    read_events();
}

void CertReloader::read_events() {
    inotify_->async_read_some(
        boost::asio::buffer(event_buffer_), [this](boost::system::error_code ec, std::size_t) {
            if (ec || stopped_) {
                return;
            }
            settle_timer_.expires_after(settle_time);
            settle_timer_.async_wait([this](boost::system::error_code wait_ec) {
                if (!wait_ec) {
                    check();
                }
            });
            read_events();
        });
}

void CertReloader::schedule_poll() {
    poll_timer_.expires_after(poll_interval_);
    poll_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) {
            return;
        }
        check();
        schedule_poll();
    });
}

}  // namespace mdadmit::server
