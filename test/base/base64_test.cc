// Tests for base/base64.cc: the RFC 4648 section 10 vectors both ways, the URL-safe unpadded
// variant (as JWTs and continue tokens use it), binary bytes, inputs past one chunk, and what the
// decoders refuse (bad length, characters, whitespace that EVP_DecodeBlock would skip, misplaced
// padding).
#include "base/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace yurthub::base {
namespace {

struct Vector {
  std::string plain, encoded;
};

// RFC 4648 section 10.
const std::vector<Vector> kRfc4648 = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

TEST(Base64Test, Rfc4648Vectors) {
  for (const Vector& v : kRfc4648) {
    SCOPED_TRACE(v.plain);
    EXPECT_EQ(encode_base64(v.plain), v.encoded);
    auto decoded = decode_base64(v.encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(*decoded, v.plain);
  }
}

TEST(Base64Test, UrlVariantIsUnpaddedWithDashAndUnderscore) {
  for (const Vector& v : kRfc4648) {
    std::string unpadded = v.encoded.substr(0, v.encoded.find('='));
    EXPECT_EQ(encode_base64url(v.plain), unpadded);
    auto decoded = decode_base64url(unpadded);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(*decoded, v.plain);
  }
  const std::string bytes("\xfb\xff\xbf", 3);  // "+/+/" in the standard alphabet
  EXPECT_EQ(encode_base64(bytes), "+/+/");
  EXPECT_EQ(encode_base64url(bytes), "-_-_");
  EXPECT_EQ(*decode_base64url("-_-_"), bytes);
  // A JWT header as kube-apiserver writes it.
  EXPECT_EQ(*decode_base64url("eyJhbGciOiJSUzI1NiJ9"), R"({"alg":"RS256"})");
}

TEST(Base64Test, BinaryAndLargeRoundTrip) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(*decode_base64(encode_base64(all)), all);
  EXPECT_EQ(*decode_base64url(encode_base64url(all)), all);
  // Past one 3 MiB / 4 MiB chunk, with a padded tail.
  std::string big((std::size_t{3} << 20) * 2 + 1, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  const std::string encoded = encode_base64(big);
  EXPECT_EQ(encoded.size(), (big.size() + 2) / 3 * 4);
  EXPECT_EQ(encoded.substr(encoded.size() - 2), "==");
  auto decoded = decode_base64(encoded);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, big);
}

TEST(Base64Test, InvalidInputIsRefused) {
  for (const char* bad :
       {"Zg=", "Zg", "Z", "Zm9vY", "Zm9v!A==", "Zm9v Yg==", " Zm9v", "Zm9v\n", "Zm9vYg=\n",
        "Z===", "Zg==Zg==", "=Zm9", "Zm=v", "Zm9v-_==", "\xc3\xa9Zm9"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(decode_base64(bad).ok());
  }
  for (const char* bad : {"Zg==", "Zm9vYg=", "Z", "Zm9vY", "+/+/", "Zm9v Yg", "Zm9v\n", "Zm.v"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(decode_base64url(bad).ok());
  }
  EXPECT_EQ(decode_base64("Zm9v!A==").error().message, "invalid base64: bad character at offset 4");
}

// Go's base64.StdEncoding (not .Strict()) ignores the unused bits of the last character, and so
// does the hub: "Zh==" decodes as "Zg==" does.
TEST(Base64Test, NonZeroPadBitsAreAccepted) { EXPECT_EQ(*decode_base64("Zh=="), "f"); }

}  // namespace
}  // namespace yurthub::base
