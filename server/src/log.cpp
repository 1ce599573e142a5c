#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace mdadmit::server {

namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
    switch (level) {
        case LogLevel::debug:
            return spdlog::level::debug;
        case LogLevel::info:
            return spdlog::level::info;
        case LogLevel::warn:
            return spdlog::level::warn;
        case LogLevel::error:
            break;
    }
    return spdlog::level::err;
}

std::string json_string(std::string_view text) {
    return boost::json::serialize(boost::json::string(text));
}

// A text value is quoted when it would otherwise split the key=value reading.
std::string text_value(std::string_view value) {
    if (!value.empty() && value.find_first_of(" \"=\n\t") == std::string_view::npos) {
        return std::string(value);
    }
    return json_string(value);
}

}  // namespace

Log::Log(std::string_view level, bool json) : json_(json) {
    logger_ = std::make_shared<spdlog::logger>("mdadmit",
                                               std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger_->set_level(spdlog::level::from_str(std::string(level)));
    logger_->set_pattern(json ? R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})"
                              : "%Y-%m-%dT%H:%M:%S.%fZ %l %v",
                         spdlog::pattern_time_type::utc);
    logger_->flush_on(spdlog::level::info);
}

bool Log::enabled(LogLevel level) const {
    return logger_->should_log(to_spdlog(level));
}

void Log::write(LogLevel level, std::string_view message,
                std::initializer_list<LogField> fields) const {
    if (!enabled(level)) {
        return;
    }
    std::string line;
    if (json_) {
        line = "\"msg\":" + json_string(message);
        for (const auto& [key, value] : fields) {
            line += ",\"" + std::string(key) + "\":" + json_string(value);
        }
    } else {
        line = std::string(message);
        for (const auto& [key, value] : fields) {
            line += " " + std::string(key) + "=" + text_value(value);
        }
    }
    logger_->log(to_spdlog(level), line);
}

}  // namespace mdadmit::server
