// The framers' string loops (base/json_string_run.h) against a byte-at-a-time reading of the same
// rules, on random strings dense in quotes, backslashes, escape letters and control characters, and
// on runs of backslashes across the 64-byte block boundary.
#include "base/json_string_run.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

namespace yurthub::base::detail {
namespace {

bool is_simple_escape(char c) {
  return std::string_view("\"\\/bfnrt").find(c) != std::string_view::npos;
}

// Reading from a byte that is not escaped: where the scanner must look (a closing quote, a
// control character, the backslash of an escape other than a one-character one), or n.
std::size_t first_stop(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' || static_cast<unsigned char>(c) < 0x20) return i;
    if (c == '\\') {
      if (i + 1 < s.size() && is_simple_escape(s[i + 1])) {
        i += 2;
        continue;
      }
      return i;
    }
    ++i;
  }
  return i;
}

// Whether reading from `from` steps on `at` (it is not the byte after a backslash).
bool is_step(std::string_view s, std::size_t from, std::size_t at) {
  std::size_t i = from;
  while (i < at) i += s[i] == '\\' && i + 1 < s.size() && is_simple_escape(s[i + 1]) ? 2 : 1;
  return i == at;
}

std::string random_text(std::mt19937& rng, std::size_t size) {
  static constexpr char kAlphabet[] = {'a', 'a', 'a', 'x',    '"',    '\\', '\\',   '\\',   'n',
                                       'u', '/', 't', '\x01', '\x1f', ' ',  '\x7f', '\xc3', 'Z'};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 1);
  std::string s(size, 'a');
  for (char& c : s) c = kAlphabet[pick(rng)];
  return s;
}

void expect_agrees(std::string_view s, std::size_t from) {
  const std::size_t stop = first_stop(s, from);
  const std::size_t got = skip_escaped_blocks(s.data(), from, s.size());
  if (got == stop) return;
  // Short of the stop, it must have stopped for want of a whole block, on a step.
  EXPECT_LT(got, stop) << testing::PrintToString(std::string(s)) << " from " << from;
  EXPECT_LT(s.size() - got, 64u) << testing::PrintToString(std::string(s)) << " from " << from;
  EXPECT_TRUE(is_step(s, from, got)) << testing::PrintToString(std::string(s)) << " at " << got;
}

TEST(JsonStringRunTest, RandomStringsStopWhereAByteAtATimeReadingStops) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 20000; ++round) {
    const std::string s = random_text(rng, rng() % 300);
    // Starting on a byte that is not escaped: where a string's content starts, or after a stop.
    expect_agrees(s, 0);
    const std::size_t stop = first_stop(s, 0);
    if (stop < s.size()) expect_agrees(s, stop + 1 < s.size() && s[stop] != '\\' ? stop + 1 : stop);
  }
}

TEST(JsonStringRunTest, SparseEscapesInLongRuns) {
  std::mt19937 rng(7);
  for (int round = 0; round < 5000; ++round) {
    std::string s(64 + rng() % 400, 'k');
    for (int k = 0; k < 4; ++k) s[rng() % s.size()] = "\\\"n\x02"[rng() % 4];
    expect_agrees(s, 0);
  }
}

TEST(JsonStringRunTest, BackslashRunsAcrossTheBlockBoundary) {
  for (std::size_t start = 50; start < 70; ++start) {
    for (std::size_t run = 1; run <= 12; ++run) {
      for (const char after : {'"', 'n', 'u', 'q', 'a', '\x05'}) {
        std::string s(start, 'a');
        s.append(run, '\\');
        s.push_back(after);
        s.append(100, 'b');
        s.push_back('"');
        expect_agrees(s, 0);
      }
    }
  }
}

TEST(JsonStringRunTest, EscapedQuotesAreContentAndTheClosingQuoteStops) {
  std::string s;
  for (int k = 0; k < 40; ++k) s += R"(\"key\":\"value\",)";
  s += R"(tail" , "next")";
  const std::size_t closing = s.find(R"(tail")") + 4;
  const std::size_t i = skip_escaped_blocks(s.data(), 0, s.size());
  EXPECT_GT(i, closing - 64);  // read in blocks to the last one
  EXPECT_EQ(first_stop(s, i), closing);
  // With a whole block after it, the closing quote is found in blocks.
  s.append(64, ' ');
  EXPECT_EQ(skip_escaped_blocks(s.data(), 0, s.size()), closing);
}

TEST(JsonStringRunTest, RunStopsAtTheFirstQuoteBackslashOrControl) {
  std::mt19937 rng(11);
  for (int round = 0; round < 20000; ++round) {
    const std::string s = random_text(rng, rng() % 100);
    const std::size_t from = s.empty() ? 0 : rng() % (s.size() + 1);
    std::size_t expected = from;
    while (expected < s.size() && !stops_string_run(s[expected])) ++expected;
    EXPECT_EQ(skip_string_run(s.data(), from, s.size()), expected);
  }
}

}  // namespace
}  // namespace yurthub::base::detail
