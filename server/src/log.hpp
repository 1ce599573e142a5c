#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace spdlog {
class logger;
}

namespace mdadmit::server {

using LogField = std::pair<std::string_view, std::string_view>;

enum class LogLevel { debug, info, warn, error };

// Structured log lines on stderr through spdlog: `message key=value ...` as text, or one
// JSON object per line. Object bodies are never logged.
class Log {
  public:
    // level: trace, debug, info, warn, error.
    Log(std::string_view level, bool json);

    void write(LogLevel level, std::string_view message,
               std::initializer_list<LogField> fields = {}) const;
    bool enabled(LogLevel level) const;

  private:
    std::shared_ptr<spdlog::logger> logger_;
    bool json_;
};

}  // namespace mdadmit::server
