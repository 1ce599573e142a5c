#pragma once

#include <string>
#include <vector>

namespace mdadmit::test {

struct PemPair {
    std::string certificate;
    std::string key;
};

// ECDSA P-256 certificates made in memory for the tests: a CA, and leaves it signs.
class TestCa {
  public:
    explicit TestCa(const std::string& name = "mdadmit test CA");
    const PemPair& pem() const { return ca_; }
    // A serving (or, with client = true, client) certificate for `common_name` with SANs
    // localhost and 127.0.0.1.
    PemPair issue(const std::string& common_name, bool client = false) const;

  private:
    PemPair ca_;
};

void write_file(const std::string& path, const std::string& content);

}  // namespace mdadmit::test
