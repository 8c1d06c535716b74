// Authentication as kube-apiserver does it for the two methods the fake supports: a verified TLS
// client certificate (user = subject CN, groups = subject O values) and a bearer token from a
// static token file (`--token-file`, CSV lines `token,user,uid,"group1,group2"`). Also the
// `--deny-user` authorizer. Used by server.cc once per request; immutable after loading.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/ssl.h>

#include "base/result.h"

namespace yurthub::fake {

struct Identity {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  bool authenticated() const { return !user.empty(); }
};

// The identity of a verified peer certificate on `ssl`, or an empty Identity if the client sent
// none (or it did not verify).
Identity identity_from_certificate(SSL* ssl);

class TokenAuthenticator {
 public:
  // Parses the kube static token CSV text. Errors name the line.
  static Result<TokenAuthenticator> parse(std::string_view text);
  static Result<TokenAuthenticator> load(const std::string& path);

  // nullptr if the token is unknown.
  const Identity* find(std::string_view token) const;
  std::size_t size() const { return tokens_.size(); }

 private:
  std::map<std::string, Identity, std::less<>> tokens_;
};

// Splits one CSV record (RFC 4180 quoting, as Go's encoding/csv). Pure.
std::vector<std::string> split_csv_line(std::string_view line);

// `Authorization: Bearer X` → "X"; "" if the header is absent or not a bearer token.
std::string bearer_token(std::string_view authorization);

}  // namespace yurthub::fake
