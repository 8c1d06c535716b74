// Base64 (RFC 4648 section 4, padded) and base64url (section 5, unpadded) on OpenSSL's public
// EVP_EncodeBlock/EVP_DecodeBlock. Used for the journal's protobuf bodies (cache/journal_entry.cc),
// the offline list's continue tokens (cache/local_proxy.cc), service-account JWTs
// (cache/token_keeper.cc) and kubeconfig *-data fields (kube/kubeconfig.cc). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::base {

// `bytes` in the standard alphabet, padded with '=' to a multiple of 4 characters.
std::string encode_base64(std::string_view bytes);

// Decodes padded standard base64. Refused: a length that is not a multiple of 4, a character
// outside the alphabet (whitespace and line breaks included: strip them first where a format
// allows them), '=' anywhere but the last one or two places. Non-zero bits in the last
// character before the padding are accepted, as Go's base64.StdEncoding does.
Result<std::string> decode_base64(std::string_view text);

// `bytes` in the URL-safe alphabet ('-' and '_' for '+' and '/'), without padding, as JWTs
// (RFC 7515) and the hub's continue tokens are written.
std::string encode_base64url(std::string_view bytes);

// Decodes unpadded base64url. Refused: '=', '+', '/' or any other character outside the URL-safe
// alphabet, and a length that leaves one character over (4n + 1).
Result<std::string> decode_base64url(std::string_view text);

}  // namespace yurthub::base
