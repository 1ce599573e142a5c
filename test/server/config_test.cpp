// Start-up settings: flags, the config file, and refusals with clear messages.
#include "config.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace mdadmit::test {
namespace {

rules::Result<server::Config> parse(std::vector<std::string> arguments) {
    bool help = false;
    return server::parse_config(arguments, help);
}

TEST(Config, DefaultsAndFlags) {
    const auto config =
        parse({"--cert-file", "c.pem", "--key-file=k.pem", "--listen", "127.0.0.1:0",
               "--health-listen=off", "--idle-timeout=2m", "--tls-min-version=1.3", "--threads=3"});
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config.value().listen.host, "127.0.0.1");
    EXPECT_EQ(config.value().listen.port, 0);
    EXPECT_FALSE(config.value().health_listen.has_value());
    EXPECT_EQ(config.value().idle_timeout, std::chrono::minutes(2));
    EXPECT_TRUE(config.value().tls13_only);
    EXPECT_EQ(config.value().worker_threads(), 3u);
    EXPECT_EQ(config.value().max_body_bytes, 7u * 1024 * 1024);
    EXPECT_GT(config.value().idle_timeout, std::chrono::seconds(90));
}

TEST(Config, BadValuesAreRefusedNamingTheSetting) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--cert-file=c", "--key-file=k", "--threads=many"},
         "--threads: expected an integer of at least 0, got \"many\""},
        {{"--cert-file=c", "--key-file=k", "--idle-timeout=soon"},
         "--idle-timeout: expected a positive duration such as 500ms, 10s or 2m, got \"soon\""},
        {{"--cert-file=c", "--key-file=k", "--listen=localhost"},
         "--listen: expected HOST:PORT (port 0 picks a free one), got \"localhost\""},
        {{"--cert-file=c", "--key-file=k", "--log-format=xml"},
         "--log-format: expected one of text, json, got \"xml\""},
        {{"--cert-file=c", "--key-file=k", "--bogus=1"}, "unknown setting --bogus (see --help)"},
        {{"--key-file=k"},
         "--cert-file and --key-file are required: admission is served over TLS only"},
        {{"--cert-file"}, "--cert-file: missing value"},
        {{"positional"}, "unexpected argument \"positional\" (settings are --name=value)"},
    };
    for (const auto& [arguments, message] : cases) {
        const auto config = parse(arguments);
        ASSERT_FALSE(config.ok()) << message;
        EXPECT_EQ(config.error().message, message);
    }
}

TEST(Config, AFileGivesSettingsAndFlagsWin) {
    const std::string path = testing::TempDir() + "/mdadmit.conf";
    std::ofstream(path)
        << "# webhook\ncert-file = /certs/tls.crt\nkey-file=/certs/tls.key\nthreads = 4\n\n";
    const auto config = parse({"--config", path, "--threads=2"});
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config.value().cert_file, "/certs/tls.crt");
    EXPECT_EQ(config.value().threads, 2u);
    std::ofstream(path) << "threads: 4\n";
    EXPECT_EQ(parse({"--config", path}).error().message, path + ":1: expected name = value");
}

TEST(Config, HelpDocumentsEverySetting) {
    bool help = false;
    EXPECT_TRUE(server::parse_config({"--help"}, help).ok());
    EXPECT_TRUE(help);
    const std::string usage = server::usage_text();
    for (const char* name :
         {"--listen", "--health-listen", "--cert-file", "--key-file", "--client-ca-file",
          "--threads", "--max-body-bytes", "--idle-timeout", "--shutdown-delay", "--rules-data",
          "--log-level", "--log-format", "--config"}) {
        EXPECT_NE(usage.find(name), std::string::npos) << name;
    }
}

}  // namespace
}  // namespace mdadmit::test

namespace mdadmit::test {
namespace {

TEST(Config, TheServerDocsListEverySetting) {
    std::ifstream in(std::string(MDADMIT_SOURCE_DIR) + "/docs/server.md");
    const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string usage = server::usage_text();
    std::size_t count = 0;
    for (std::size_t at = usage.find("  --"); at != std::string::npos;
         at = usage.find("  --", at + 1)) {
        const std::string name = usage.substr(at + 2, usage.find(' ', at + 2) - at - 2);
        EXPECT_NE(docs.find("`" + name + "`"), std::string::npos)
            << name << " is missing from docs/server.md";
        ++count;
    }
    EXPECT_GT(count, 20u);
}

}  // namespace
}  // namespace mdadmit::test
