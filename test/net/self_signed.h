// test_support::SelfSignedCertificate: a P-256 certificate and key made with the openssl tool in
// a temporary directory, removed with the object. Header-only; used by test/net/tls_test.cc,
// test/net/socket_tls_test.cc and test/hub/loopback_pki.h.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace yurthub::test_support {

class SelfSignedCertificate {
 public:
  // `extension` is an -addext argument ("subjectAltName=IP:127.0.0.1"), or empty.
  explicit SelfSignedCertificate(const std::string& common_name,
                                 const std::string& extension = "") {
    char pattern[] = "/tmp/yurthub-self-signed-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
        key() + " -out " + certificate() + " -subj /CN=" + common_name;
    if (!extension.empty()) cmd += " -addext " + extension;
    cmd += " -days 1 >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  ~SelfSignedCertificate() { std::filesystem::remove_all(dir_); }
  SelfSignedCertificate(const SelfSignedCertificate&) = delete;
  SelfSignedCertificate& operator=(const SelfSignedCertificate&) = delete;

  std::string certificate() const { return dir_ + "/c.pem"; }
  std::string key() const { return dir_ + "/k.pem"; }

 private:
  std::string dir_;
};

}  // namespace yurthub::test_support
