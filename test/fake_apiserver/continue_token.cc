// Continue tokens; see continue_token.h.
#include "test/fake_apiserver/continue_token.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::fake {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-' || c == '+') return 62;
  if (c == '_' || c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64url_encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t n = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8) | uint8_t(data[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t n = uint8_t(data[i]) << 16;
    if (rest == 2) n |= uint8_t(data[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    if (rest == 2) out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = decode_char(c);
    if (v < 0) return make_error("illegal base64 data");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (bits >= 6) return make_error("illegal base64 data: truncated");
  return out;
}

std::string encode_continue(const ContinueToken& token) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("v");
  w.String("meta.k8s.io/v1");
  w.Key("rv");
  w.Uint64(token.rv);
  w.Key("start");
  std::string start = token.start;
  start += '\0';
  w.String(start.data(), static_cast<rapidjson::SizeType>(start.size()));
  w.EndObject();
  return base64url_encode(std::string_view(buf.GetString(), buf.GetSize()));
}

Result<ContinueToken> decode_continue(std::string_view text) {
  auto raw = base64_decode(text);
  if (!raw) return make_error("continue key is not valid: " + raw.error().message);
  rapidjson::Document doc;
  doc.Parse(raw->data(), raw->size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return make_error("continue key is not valid: invalid JSON");
  }
  auto v = doc.FindMember("v");
  if (v == doc.MemberEnd() || !v->value.IsString() ||
      std::string_view(v->value.GetString()) != "meta.k8s.io/v1") {
    return make_error("continue key is not valid: server does not recognize this encoded key");
  }
  auto rv = doc.FindMember("rv");
  auto start = doc.FindMember("start");
  if (rv == doc.MemberEnd() || !rv->value.IsUint64() || start == doc.MemberEnd() ||
      !start->value.IsString()) {
    return make_error("continue key is not valid: incorrect encoded start resourceVersion");
  }
  ContinueToken token;
  token.rv = rv->value.GetUint64();
  token.start.assign(start->value.GetString(), start->value.GetStringLength());
  if (!token.start.empty() && token.start.back() == '\0') token.start.pop_back();
  return token;
}

}  // namespace yurthub::fake
