// Base64 and base64url on OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock; see base64.h. Callers: the
// journal, the offline continue tokens, the token keeper and the kubeconfig loader.
//
// EVP_DecodeBlock is lenient where these decoders must not be: it skips leading and trailing
// whitespace, and it decodes padding as zero bytes (its length counts them). So the input is
// checked here first (alphabet, length, padding), and the padding is subtracted from its length.
// The work is done in chunks, so no length passed to OpenSSL's int parameters can overflow.
#include "base/base64.h"

#include <algorithm>
#include <cstddef>

#include <openssl/evp.h>

namespace yurthub::base {
namespace {

// Multiples of 3 bytes / 4 characters: only the last chunk has padding.
constexpr std::size_t kEncodeChunk = std::size_t{3} << 20;
constexpr std::size_t kDecodeChunk = std::size_t{4} << 20;

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

unsigned char* out_at(std::string& out, std::size_t offset) {
  return reinterpret_cast<unsigned char*>(out.data() + offset);
}

const unsigned char* in_at(std::string_view in, std::size_t offset) {
  return reinterpret_cast<const unsigned char*>(in.data() + offset);
}

}  // namespace

std::string encode_base64(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');  // EVP_EncodeBlock writes a NUL
  std::size_t written = 0;
  for (std::size_t at = 0; at < bytes.size(); at += kEncodeChunk) {
    const std::size_t n = std::min(kEncodeChunk, bytes.size() - at);
    written += static_cast<std::size_t>(
        EVP_EncodeBlock(out_at(out, written), in_at(bytes, at), static_cast<int>(n)));
  }
  out.resize(written);
  return out;
}

Result<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return make_error("invalid base64: length not a multiple of 4");
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  for (std::size_t i = 0; i + pad < text.size(); ++i) {
    if (!in_alphabet(text[i])) {
      return make_error("invalid base64: bad character at offset " + std::to_string(i));
    }
  }
  std::string out(text.size() / 4 * 3, '\0');
  std::size_t written = 0;
  for (std::size_t at = 0; at < text.size(); at += kDecodeChunk) {
    const std::size_t n = std::min(kDecodeChunk, text.size() - at);
    const int got = EVP_DecodeBlock(out_at(out, written), in_at(text, at), static_cast<int>(n));
    if (got < 0) return make_error("invalid base64");
    written += static_cast<std::size_t>(got);
  }
  out.resize(written - pad);  // EVP_DecodeBlock decodes each '=' as a zero byte
  return out;
}

std::string encode_base64url(std::string_view bytes) {
  std::string out = encode_base64(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

Result<std::string> decode_base64url(std::string_view text) {
  if (text.size() % 4 == 1) return make_error("invalid base64url: truncated");
  std::string standard(text);
  for (std::size_t i = 0; i < standard.size(); ++i) {
    char& c = standard[i];
    if (c == '+' || c == '/' || c == '=') {
      return make_error("invalid base64url: bad character at offset " + std::to_string(i));
    }
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  standard.append((4 - standard.size() % 4) % 4, '=');
  return decode_base64(standard);
}

}  // namespace yurthub::base
