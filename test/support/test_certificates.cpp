#include "test_certificates.hpp"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace mdadmit::test {

namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

Key new_key() {
    return Key(EVP_EC_gen("P-256"), EVP_PKEY_free);
}

std::string to_pem(X509* certificate) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, certificate);
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(length));
    BIO_free(bio);
    return out;
}

std::string to_pem(EVP_PKEY* key) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(length));
    BIO_free(bio);
    return out;
}

Key key_from_pem(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    Key key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr), EVP_PKEY_free);
    BIO_free(bio);
    return key;
}

Certificate certificate_from_pem(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    Certificate certificate(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), X509_free);
    BIO_free(bio);
    return certificate;
}

void add_extension(X509* certificate, X509* issuer, int nid, const char* value) {
    X509V3_CTX context;
    X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
    X509_add_ext(certificate, extension, -1);
    X509_EXTENSION_free(extension);
}

Certificate new_certificate(const std::string& common_name, EVP_PKEY* key) {
    static std::atomic<long> serial{1};
    Certificate certificate(X509_new(), X509_free);
    X509_set_version(certificate.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), serial++);
    X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 30L * 24 * 3600);
    X509_set_pubkey(certificate.get(), key);
    X509_NAME* name = X509_get_subject_name(certificate.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                               0);
    return certificate;
}

}  // namespace

TestCa::TestCa(const std::string& name) {
    Key key = new_key();
    Certificate certificate = new_certificate(name, key.get());
    X509_set_issuer_name(certificate.get(), X509_get_subject_name(certificate.get()));
    add_extension(certificate.get(), certificate.get(), NID_basic_constraints, "critical,CA:TRUE");
    add_extension(certificate.get(), certificate.get(), NID_key_usage,
                  "critical,keyCertSign,cRLSign");
    X509_sign(certificate.get(), key.get(), EVP_sha256());
    ca_ = {to_pem(certificate.get()), to_pem(key.get())};
}

PemPair TestCa::issue(const std::string& common_name, bool client) const {
    Key ca_key = key_from_pem(ca_.key);
    Certificate ca_certificate = certificate_from_pem(ca_.certificate);
    Key key = new_key();
    Certificate certificate = new_certificate(common_name, key.get());
    X509_set_issuer_name(certificate.get(), X509_get_subject_name(ca_certificate.get()));
    add_extension(certificate.get(), ca_certificate.get(), NID_basic_constraints,
                  "critical,CA:FALSE");
    add_extension(certificate.get(), ca_certificate.get(), NID_ext_key_usage,
                  client ? "clientAuth" : "serverAuth");
    add_extension(certificate.get(), ca_certificate.get(), NID_subject_alt_name,
                  "DNS:localhost,IP:127.0.0.1");
    X509_sign(certificate.get(), ca_key.get(), EVP_sha256());
    return {to_pem(certificate.get()), to_pem(key.get())};
}

void write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!(out << content)) {
        throw std::runtime_error("cannot write " + path);
    }
}

}  // namespace mdadmit::test
