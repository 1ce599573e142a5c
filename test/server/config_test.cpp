// Start-up settings: flags, the config file, and refusals with clear messages.
#include "config.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace mdadmit::test {
namespace {

rules::Result<server::Config> parse(std::vector<std::string> arguments) {
    server::Help help = server::Help::none;
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

TEST(Config, EnforceEntriesAccumulateAndFlagsReplaceTheFilesOnes) {
    const std::string path = testing::TempDir() + "/mdadmit-enforce.conf";
    std::ofstream(path) << "cert-file = c\nkey-file = k\nenforce = parallelism=deny\n"
                           "encode-platform-unknown = deny\n";
    const auto from_file = parse({"--config", path});
    ASSERT_TRUE(from_file.ok()) << from_file.error().message;
    EXPECT_EQ(rules::to_string(from_file.value().enforcement),
              "parallelism=deny,encode-platform-unknown=deny");
    const auto with_flags =
        parse({"--config", path, "--enforce", "*=warn", "--enforce=port-uniformity=off,x=deny"});
    ASSERT_TRUE(with_flags.ok()) << with_flags.error().message;
    EXPECT_EQ(rules::to_string(with_flags.value().enforcement),
              "*=warn,port-uniformity=off,x=deny");
    const auto refused = parse({"--config", path, "--enforce", "parallelism=block"});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(
        refused.error().message,
        "--enforce: expected RULE=deny|warn|off or *=deny|warn|off, got \"parallelism=block\"");
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

TEST(Config, HelpShowsEverySettingWithTheDefaultsOfTheConfig) {
    server::Help help = server::Help::none;
    EXPECT_TRUE(server::parse_config({"--help"}, help).ok());
    EXPECT_EQ(help, server::Help::usage);
    const std::string usage = server::usage_text();
    for (const char* line :
         {"--listen HOST:PORT",
          "admission over TLS; port 0 picks a free port (default "
          "0.0.0.0:8443)",
          "keep it above the apiserver's 90s (default 2m)", "--cert-file FILE", "(required)",
          "I/O threads, each with its own listener (default one per core)", "(default 7340032)",
          "(default /var/run/secrets/kubernetes.io/serviceaccount/token)", "--config FILE"}) {
        EXPECT_NE(usage.find(line), std::string::npos) << line << "\n" << usage;
    }
}

// docs/server.md carries the settings table exactly as the binary prints it with
// --help-markdown, so the documented defaults cannot drift from the Config's.
TEST(Config, TheServerDocsListEverySettingWithItsDefault) {
    server::Help help = server::Help::none;
    EXPECT_TRUE(server::parse_config({"--help-markdown"}, help).ok());
    EXPECT_EQ(help, server::Help::markdown);

    std::ifstream in(std::string(MDADMIT_SOURCE_DIR) + "/docs/server.md");
    ASSERT_TRUE(in) << "docs/server.md";
    std::string documented;
    bool in_table = false;
    for (std::string line; std::getline(in, line);) {
        if (line == "| setting | default | meaning |") {
            in_table = true;
        }
        if (in_table && (line.empty() || line.front() != '|')) {
            break;
        }
        if (in_table) {
            documented += line + "\n";
        }
    }
    EXPECT_EQ(documented, server::settings_markdown())
        << "regenerate the table with: mdadmit-webhook --help-markdown";
}

}  // namespace
}  // namespace mdadmit::test
