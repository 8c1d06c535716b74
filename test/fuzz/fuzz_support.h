// Helpers shared by the libFuzzer targets in test/fuzz: the input as text, split into parts at
// NUL bytes (which no JSON, selector or HTTP head the targets read may contain), chunked feeding
// driven by the input's own bytes, and a check that aborts with a message, so an oracle failure
// is a crash libFuzzer saves like any other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yurthub::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The first `count` - 1 NUL-separated parts of `in`, then the rest (missing parts are empty).
inline std::vector<std::string_view> split_parts(std::string_view in, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    const std::size_t nul = in.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(in.substr(0, nul));
    in.remove_prefix(nul + 1);
  }
  parts.push_back(in);
  parts.resize(count);
  return parts;
}

// Splits `in` into pieces whose sizes cycle through 1..`seed` % 61 + 1 bytes, so one input is
// framed both whole and in many small feeds.
inline std::vector<std::string_view> chunks(std::string_view in, unsigned seed) {
  std::vector<std::string_view> out;
  const std::size_t period = seed % 61 + 1;
  for (std::size_t i = 0, n = 1; i < in.size(); n = n % period + 1) {
    out.push_back(in.substr(i, n));
    i += n;
  }
  return out;
}

// An oracle: aborts (a crash libFuzzer saves) when `ok` is false.
inline void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

// The split-invariance oracle of the streaming decoders: `run` (pieces -> a transcript of what
// came out) gives the same transcript for the input fed whole and fed in small pieces.
template <class Run>
void check_split_invariance(const std::uint8_t* data, std::size_t size, Run run) {
  const std::string_view in = as_text(data, size);
  const std::string whole = run(std::vector<std::string_view>{in});
  check(whole == run(chunks(in, size ? data[0] : 0)), "the output depends on how the bytes arrive");
}

// A selector parsed from `text` (kube/selector.h's LabelSelector or FieldSelector) and the
// selector its canonical() form parses to, after the oracles every selector must pass: the
// canonical form round-trips, and a selector covers itself. nullopt when `text` does not parse.
template <class Selector>
std::optional<std::pair<Selector, Selector>> parse_selector(std::string_view text) {
  auto a = Selector::parse(text);
  if (!a) return std::nullopt;
  const std::string canonical = a->canonical();
  auto reparsed = Selector::parse(canonical);
  check(reparsed.ok() && reparsed->canonical() == canonical, "canonical() does not round-trip");
  check(a->covers(*a), "a selector does not cover itself");
  return std::pair<Selector, Selector>(std::move(*a), std::move(*reparsed));
}

}  // namespace yurthub::fuzz
