// GzipDecoder against data compressed by the system's gzip: small vectors embedded below (made
// with gzip 1.12 at test-writing time), a larger one made by /bin/gzip when the test runs, a
// hand-built header with every optional field, and corrupt, truncated and oversized input; every
// input is fed at every split and one byte at a time.
#include "base/gzip.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/crc.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace yurthub::base {
namespace {

std::string bytes(std::initializer_list<std::uint8_t> b) { return std::string(b.begin(), b.end()); }

// printf 'hello, world\n' | gzip -c -n
const std::string kHello =
    bytes({0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb,
           0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x28, 0xcf, 0x2f, 0xca, 0x49,
           0xe1, 0x02, 0x00, 0x53, 0x74, 0x24, 0xf4, 0x0d, 0x00, 0x00, 0x00});
// printf '' | gzip -c -n
const std::string kEmpty = bytes({0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
                                  0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
// printf '\xc0\xc1\xc2\xc3\xc4' | gzip -c -n: five 9-bit fixed-Huffman literals after the 3-bit
// block header put the end-of-block code on a byte boundary, so an inflater's 9-bit look-ahead
// may read the first trailer byte into its bit reservoir when it takes the slow path there.
const std::string kAligned =
    bytes({0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x3b, 0x70, 0xf0,
           0xd0, 0xe1, 0x23, 0x00, 0xaf, 0x56, 0x33, 0x0f, 0x05, 0x00, 0x00, 0x00});
// gzip -c -9 pods.json, of pods_text() below: FNAME "pods.json", an MTIME, dynamic Huffman blocks.
const std::string kPods = bytes(
    {0x1f, 0x8b, 0x08, 0x08, 0x00, 0xf1, 0x53, 0x65, 0x02, 0x03, 0x70, 0x6f, 0x64, 0x73, 0x2e,
     0x6a, 0x73, 0x6f, 0x6e, 0x00, 0x85, 0xd3, 0xb1, 0x0d, 0xc2, 0x50, 0x10, 0x04, 0xd1, 0x9c,
     0x32, 0x2e, 0x06, 0x89, 0xdd, 0x05, 0x03, 0xae, 0x82, 0x16, 0x40, 0x76, 0x80, 0x90, 0x4d,
     0x48, 0x60, 0xd1, 0x3b, 0xb8, 0x00, 0xe6, 0x87, 0xa7, 0xc9, 0x9e, 0xf6, 0x96, 0x7a, 0x3e,
     0xe6, 0xa1, 0xfa, 0xba, 0xbe, 0x86, 0xda, 0xd6, 0x7c, 0x9b, 0xc6, 0xdf, 0xf1, 0x1e, 0xef,
     0xbb, 0x7d, 0x7d, 0x36, 0xcb, 0xdf, 0x2a, 0xac, 0xc6, 0x1a, 0xac, 0x07, 0xac, 0x47, 0xac,
     0x1d, 0xd6, 0x13, 0xd6, 0x33, 0xd6, 0x0b, 0x6b, 0x34, 0xb0, 0x58, 0x4b, 0xcc, 0x25, 0xf6,
     0x12, 0x83, 0x89, 0xc5, 0xc4, 0x64, 0x62, 0x33, 0x31, 0x9a, 0x58, 0xcd, 0xac, 0xe6, 0xc6,
     0xc6, 0x58, 0xcd, 0xac, 0x66, 0x56, 0x33, 0xab, 0x99, 0xd5, 0xcc, 0x6a, 0x66, 0x35, 0xb3,
     0x5a, 0x58, 0x2d, 0xac, 0x96, 0xc6, 0x6b, 0xb2, 0x5a, 0x58, 0x2d, 0xac, 0x16, 0x56, 0x0b,
     0xab, 0x85, 0xd5, 0xb2, 0xaa, 0x7d, 0x01, 0x5d, 0x57, 0x1f, 0x10, 0xce, 0x04, 0x00, 0x00});

std::string pods_text() {
  std::string s;
  for (int i = 0; i < 40; ++i) s += R"({"kind":"Pod","name":"web-)" + std::to_string(i) + "\"}\n";
  return s;
}

struct Decoded {
  std::string out;
  std::string error;
  bool done = false;
};

// Feeds `gz` in pieces whose sizes `next_size()` returns, after a prefix already in `out`.
template <class NextSize>
Decoded decode(std::string_view gz, NextSize next_size, std::size_t max = std::size_t{4} << 30) {
  GzipDecoder d(max);
  Decoded r;
  r.out = "prefix:";
  for (std::size_t pos = 0; pos < gz.size() && r.error.empty();) {
    const std::size_t n = std::min(next_size(), gz.size() - pos);
    const Status s = d.feed(gz.substr(pos, n), r.out);
    if (!s.ok()) r.error = s.error().message;
    pos += n;
  }
  r.done = d.done();
  if (r.out.compare(0, 7, "prefix:") != 0) r.error += " (prefix lost)";
  r.out.erase(0, 7);
  return r;
}

Decoded decode_pieces(std::string_view gz, std::size_t piece,
                      std::size_t max = std::size_t{4} << 30) {
  return decode(
      gz, [=] { return piece; }, max);
}

// Every piece size from 1 to the whole, and every split in two.
void check_every_split(const std::string& gz, const std::string& want) {
  for (std::size_t piece = 1; piece <= gz.size(); ++piece) {
    const Decoded r = decode_pieces(gz, piece);
    ASSERT_EQ(r.error, "") << "piece " << piece;
    ASSERT_EQ(r.out, want) << "piece " << piece;
    ASSERT_TRUE(r.done) << "piece " << piece;
  }
  for (std::size_t split = 1; split < gz.size(); ++split) {
    bool first = true;
    const Decoded r = decode(gz, [&] { return std::exchange(first, false) ? split : gz.size(); });
    ASSERT_EQ(r.error, "") << "split " << split;
    ASSERT_EQ(r.out, want) << "split " << split;
    ASSERT_TRUE(r.done) << "split " << split;
  }
}

TEST(GzipDecoder, SystemGzipVectorsAtEverySplit) {
  check_every_split(kHello, "hello, world\n");
  check_every_split(kEmpty, "");
  check_every_split(kAligned, "\xc0\xc1\xc2\xc3\xc4");
  check_every_split(kPods, pods_text());
}

// A header with FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC in front of kHello's deflate data.
std::string full_header_hello(bool good_header_crc) {
  std::string h = bytes({0x1f, 0x8b, 0x08, 0x1f, 0x78, 0x56, 0x34, 0x12, 0x00, 0x03});
  h += bytes({0x07, 0x00, 'A', 'p', 0x03, 0x00, 'x', 'y', 'z'});  // XLEN 7: one subfield
  h += std::string("hello.txt") + '\0';
  h += std::string("made by hand, {not} json") + '\0';
  boost::crc_32_type crc;
  crc.process_bytes(h.data(), h.size());
  const std::uint32_t crc16 = (crc.checksum() & 0xffff) ^ (good_header_crc ? 0 : 1);
  h += bytes({static_cast<std::uint8_t>(crc16), static_cast<std::uint8_t>(crc16 >> 8)});
  return h + kHello.substr(10);
}

TEST(GzipDecoder, HeaderWithEveryOptionalField) {
  check_every_split(full_header_hello(true), "hello, world\n");
  // FEXTRA with XLEN 0, and FNAME alone.
  std::string empty_extra = bytes({0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0x03, 0x00, 0x00});
  check_every_split(empty_extra + kHello.substr(10), "hello, world\n");
  std::string name_only = bytes({0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0x03, 'n', 0});
  check_every_split(name_only + kHello.substr(10), "hello, world\n");
}

std::string with_byte(std::string s, std::size_t at, std::uint8_t value) {
  s[at] = static_cast<char>(value);
  return s;
}

TEST(GzipDecoder, BadInput) {
  const std::size_t n = kHello.size();
  const struct {
    std::string gz;
    const char* error;
  } cases[] = {
      {with_byte(kHello, 1, 0x8c), "incorrect header check"},
      {"<html>not gzip</html>", "incorrect header check"},
      {with_byte(kHello, 2, 7), "unknown compression method"},
      {with_byte(kHello, 3, 0x20), "unknown header flags set"},
      {full_header_hello(false), "header crc mismatch"},
      {with_byte(kHello, 10, 0xff), "invalid block type"},  // BTYPE 11 is reserved
      {with_byte(kHello, n - 8, kHello[n - 8] ^ 0x01), "incorrect data check"},
      {with_byte(kHello, n - 5, 0x80), "incorrect data check"},
      {with_byte(kHello, n - 4, 0x0e), "incorrect length check"},
      {kHello + "x", "data after the gzip trailer"},
      {kHello + kEmpty, "data after the gzip trailer"},  // a second member
  };
  for (const auto& c : cases) {
    const std::string whole = decode_pieces(c.gz, c.gz.size()).error;
    for (std::size_t piece : {c.gz.size(), std::size_t{1}, std::size_t{5}}) {
      const Decoded r = decode_pieces(c.gz, piece);
      EXPECT_NE(r.error.find(c.error), std::string::npos)
          << c.error << " piece " << piece << ": " << r.error;
      // The same words, byte offsets included, however the input was split (found by
      // test/fuzz/gzip_fuzz.cc: a header CRC split across feeds was reported one byte late).
      EXPECT_EQ(r.error, whole) << "piece " << piece;
      EXPECT_FALSE(r.done) << c.error;
    }
  }
}

TEST(GzipDecoder, TruncatedIsNotDone) {
  for (const std::string* gz : {&kHello, &kPods}) {
    for (std::size_t len = 0; len < gz->size(); ++len) {
      const Decoded r = decode_pieces(gz->substr(0, len), 3);
      EXPECT_EQ(r.error, "") << len;
      EXPECT_FALSE(r.done) << len;
    }
  }
}

TEST(GzipDecoder, StaysFailedAfterAnError) {
  GzipDecoder d;
  std::string out;
  ASSERT_TRUE(d.feed(kHello, out).ok());
  EXPECT_TRUE(d.done());
  const Status garbage = d.feed("\n", out);
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().message.find("at byte 33"), std::string::npos);
  const Status later = d.feed("", out);
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().message, garbage.error().message);
  EXPECT_FALSE(d.done());
  EXPECT_EQ(out, "hello, world\n");
}

TEST(GzipDecoder, OutputBound) {
  const std::string want = pods_text();
  Decoded exact = decode_pieces(kPods, kPods.size(), want.size());
  EXPECT_EQ(exact.error, "");
  EXPECT_EQ(exact.out, want);
  for (std::size_t piece : {kPods.size(), std::size_t{1}}) {
    const Decoded over = decode_pieces(kPods, piece, want.size() - 1);
    EXPECT_NE(over.error.find("over the bound of 1229 bytes"), std::string::npos) << over.error;
    EXPECT_LE(over.out.size(), want.size() - 1);
    EXPECT_FALSE(over.done);
  }
}

TEST(GzipDecoder, MovedMidStream) {
  GzipDecoder a;
  std::string out;
  ASSERT_TRUE(a.feed(std::string_view(kPods).substr(0, 60), out).ok());
  GzipDecoder b(std::move(a));
  ASSERT_TRUE(b.feed(std::string_view(kPods).substr(60), out).ok());
  EXPECT_TRUE(b.done());
  EXPECT_EQ(out, pods_text());
}

// ---- a larger vector made by /bin/gzip now ----

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `/bin/gzip -c -<level>` over `data`; "" if that fails.
std::string system_gzip(const std::string& data, int level) {
  char dir[] = "/tmp/gzip_test_XXXXXX";
  if (mkdtemp(dir) == nullptr) return "";
  const std::string in = std::string(dir) + "/in", out = in + ".gz";
  std::ofstream(in, std::ios::binary) << data;
  const std::string cmd = "/bin/gzip -c -" + std::to_string(level) + " " + in + " > " + out;
  const int rc = std::system(cmd.c_str());
  std::string gz = rc == 0 ? read_all(out) : "";
  std::remove(in.c_str());
  std::remove(out.c_str());
  rmdir(dir);
  return gz;
}

// JSON-ish text (long matches), random bytes (stored blocks) and a run of zeros.
std::string large_data() {
  std::string s;
  std::mt19937 rng(7);
  for (int i = 0; i < 8000; ++i) {
    s += R"({"metadata":{"name":"pod-)" + std::to_string(i) + R"(","resourceVersion":")" +
         std::to_string(rng() % 100000) + R"("},"spec":{"nodeName":"edge-)" +
         std::to_string(i % 13) + "\"}}\n";
  }
  for (int i = 0; i < 200000; ++i) s += static_cast<char>(rng());
  s += std::string(300000, '\0');
  return s;
}

TEST(GzipDecoder, LargeVectorFromSystemGzip) {
  if (access("/bin/gzip", X_OK) != 0) GTEST_SKIP() << "/bin/gzip not found";
  const std::string data = large_data();
  for (int level : {1, 6, 9}) {
    const std::string gz = system_gzip(data, level);
    ASSERT_GT(gz.size(), 1000u) << "gzip -" << level << " failed";
    std::mt19937 rng(level);
    std::uniform_int_distribution<std::size_t> random_size(1, 40000);
    std::vector<std::pair<std::string, std::function<std::size_t()>>> feeds = {
        {"whole", [&] { return gz.size(); }},
        {"1 byte", [] { return std::size_t{1}; }},
        {"7 bytes", [] { return std::size_t{7}; }},
        {"16 KiB", [] { return std::size_t{16384}; }},
        {"random", [&] { return random_size(rng); }}};
    for (auto& [name, sizes] : feeds) {
      const Decoded r = decode(gz, sizes);
      EXPECT_EQ(r.error, "") << level << " " << name;
      EXPECT_TRUE(r.out == data) << level << " " << name << ": " << r.out.size() << " bytes";
      EXPECT_TRUE(r.done) << level << " " << name;
    }
  }
}

TEST(GzipDecoder, DecompressionBombStopsAtTheBound) {
  if (access("/bin/gzip", X_OK) != 0) GTEST_SKIP() << "/bin/gzip not found";
  const std::string gz = system_gzip(std::string(64u << 20, '\0'), 9);
  ASSERT_LT(gz.size(), 128u * 1024);
  const Decoded r = decode_pieces(gz, 4096, 1u << 20);
  EXPECT_NE(r.error.find("over the bound"), std::string::npos) << r.error;
  EXPECT_LE(r.out.size(), 1u << 20);
}

}  // namespace
}  // namespace yurthub::base
