// List pagination tokens in the apiserver's format: base64url (no padding) of
// {"v":"meta.k8s.io/v1","rv":229,"start":"web-0\u0000"} where `start` is the storage key, relative
// to the list's prefix, from which the next page starts (the last returned key plus NUL; see
// pods-list-page1.body). Clients treat the token as opaque. Pure; used by store.cc and its tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::fake {

struct ContinueToken {
  std::uint64_t rv = 0;
  std::string start;  // relative key, without the trailing NUL
};

std::string encode_continue(const ContinueToken& token);
// Errors: bad base64, bad JSON, wrong "v", missing rv/start.
Result<ContinueToken> decode_continue(std::string_view text);

std::string base64url_encode(std::string_view data);
// Accepts base64url or standard base64, with or without padding.
Result<std::string> base64_decode(std::string_view text);

}  // namespace yurthub::fake
