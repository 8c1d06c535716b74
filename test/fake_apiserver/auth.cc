// Authentication; see auth.h.
#include "test/fake_apiserver/auth.h"

#include <fstream>
#include <sstream>

#include <openssl/x509.h>

namespace yurthub::fake {
namespace {

std::string entry_text(X509_NAME_ENTRY* entry) {
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(entry);
  unsigned char* utf8 = nullptr;
  int len = ASN1_STRING_to_UTF8(&utf8, data);
  if (len < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(len));
  OPENSSL_free(utf8);
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

Identity identity_from_certificate(SSL* ssl) {
  Identity id;
  if (ssl == nullptr) return id;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return id;
  // kube-apiserver's x509 authenticator verifies the chain on every request, at that request's
  // time: a connection made while the certificate was valid stops authenticating once it expires.
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0) return id;
  X509_NAME* subject = X509_get_subject_name(cert);
  int cn = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (cn >= 0) id.user = entry_text(X509_NAME_get_entry(subject, cn));
  for (int i = X509_NAME_get_index_by_NID(subject, NID_organizationName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_organizationName, i)) {
    id.groups.push_back(entry_text(X509_NAME_get_entry(subject, i)));
  }
  return id;
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  fields.push_back(cur);
  return fields;
}

Result<TokenAuthenticator> TokenAuthenticator::parse(std::string_view text) {
  TokenAuthenticator auth;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    auto fields = split_csv_line(t);
    if (fields.size() < 3) {
      return make_error("token file line " + std::to_string(number) +
                        ": want token,user,uid[,\"groups\"]");
    }
    Identity id{trim(fields[1]), trim(fields[2]), {}};
    if (fields.size() >= 4) {
      for (const auto& g : split_csv_line(fields[3])) {
        std::string group = trim(g);
        if (!group.empty()) id.groups.push_back(group);
      }
    }
    std::string token = trim(fields[0]);
    if (token.empty() || id.user.empty()) {
      return make_error("token file line " + std::to_string(number) + ": empty token or user");
    }
    auth.tokens_[token] = std::move(id);
  }
  return auth;
}

Result<TokenAuthenticator> TokenAuthenticator::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

const Identity* TokenAuthenticator::find(std::string_view token) const {
  auto it = tokens_.find(token);
  return it == tokens_.end() ? nullptr : &it->second;
}

std::string bearer_token(std::string_view authorization) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.size() <= kPrefix.size()) return "";
  std::string scheme(authorization.substr(0, kPrefix.size()));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer ") return "";
  return trim(authorization.substr(kPrefix.size()));
}

}  // namespace yurthub::fake
