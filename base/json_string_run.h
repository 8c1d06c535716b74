// The framers' hot loops over the inside of a JSON string (base/json_frames.cc, ValueScanner):
// how far a string's bytes go before the scanner's state machine must look at one. Included only
// by json_frames.cc and its test; inline, so that the scanner's loop keeps them in registers.
//
// Most bytes of a Kubernetes object are inside strings. A short string is skipped sixteen bytes at
// a time to its closing quote (skip_string_run). A string full of escapes (a
// last-applied-configuration annotation writes `\"` every few bytes) was the framers' slowest
// case, one unpredictable branch per escape: from its first backslash it is read 64 bytes at a
// time as bit masks (skip_escaped_blocks), the escaped bytes found by carrying runs of
// backslashes through an addition, as simdjson does (Langdale and Lemire, "Parsing gigabytes of
// JSON per second", 2019).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace yurthub::base::detail {

// Whether `c` ends the fast run inside a string: '"', '\\' or a control character.
inline bool stops_string_run(char c) {
  return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
}

// The bytes that may follow a backslash as a one-character escape (\u is the other escape).
inline constexpr char kSimpleEscapes[] = {'"', '\\', '/', 'b', 'f', 'n', 'r', 't'};

#if defined(__SSE2__)
// The control characters of `w`: a byte is one when its unsigned minimum with 0x1f is itself.
inline __m128i control_bytes(__m128i w) {
  return _mm_cmpeq_epi8(_mm_min_epu8(w, _mm_set1_epi8(0x1f)), w);
}
#endif

// The index of the first '"', '\\' or control character in p[i, n), or n: sixteen bytes at a time
// with SSE2 (every x86-64 has it), else eight at a time in a word (each mask's lowest set bit is
// exact, which is the only bit used), then one at a time.
inline std::size_t skip_string_run(const char* p, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, slash)), control_bytes(w));
    if (const int mask = _mm_movemask_epi8(hit); mask != 0) {
      return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)));
    }
  }
#else
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      const std::uint64_t quote = w ^ (kOnes * '"'), slash = w ^ (kOnes * '\\');
      const std::uint64_t hit =
          ((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((w - kOnes * 0x20) & ~w);
      if ((hit & kHigh) != 0) {
        return i + static_cast<std::size_t>(std::countr_zero(hit & kHigh)) / 8;
      }
    }
  }
#endif
  while (i < n && !stops_string_run(p[i])) ++i;
  return i;
}

// The masks of one 64-byte block of a string: bit k is byte k.
struct StringBlockMasks {
  std::uint64_t quote = 0;      // '"'
  std::uint64_t backslash = 0;  // '\\'
  std::uint64_t control = 0;    // below 0x20
};

#if defined(__SSE2__)
inline std::uint64_t block_bits(__m128i hits, int part) {
  return static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(hits)))
         << (16 * part);
}
#endif

inline StringBlockMasks string_block_masks(const char* p) {
  StringBlockMasks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
  for (int part = 0; part < 4; ++part) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
    m.quote |= block_bits(_mm_cmpeq_epi8(w, quote), part);
    m.backslash |= block_bits(_mm_cmpeq_epi8(w, slash), part);
    m.control |= block_bits(control_bytes(w), part);
  }
#else
  for (int k = 0; k < 64; ++k) {
    const std::uint64_t bit = std::uint64_t{1} << k;
    if (p[k] == '"') m.quote |= bit;
    if (p[k] == '\\') m.backslash |= bit;
    if (static_cast<unsigned char>(p[k]) < 0x20) m.control |= bit;
  }
#endif
  return m;
}

// The bytes of a 64-byte block that may follow a backslash as a one-character escape.
inline std::uint64_t simple_escape_bytes(const char* p) {
  std::uint64_t simple = 0;
#if defined(__SSE2__)
  for (int part = 0; part < 4; ++part) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
    __m128i hits = _mm_setzero_si128();
    for (const char c : kSimpleEscapes) {
      hits = _mm_or_si128(hits, _mm_cmpeq_epi8(w, _mm_set1_epi8(c)));
    }
    simple |= block_bits(hits, part);
  }
#else
  for (int k = 0; k < 64; ++k) {
    for (const char c : kSimpleEscapes) {
      if (p[k] == c) simple |= std::uint64_t{1} << k;
    }
  }
#endif
  return simple;
}

// The bytes a backslash escapes, in a block whose first byte is not escaped; *carry is set when
// the block's last byte is a backslash that escapes the next block's first. A run of backslashes
// escapes every other byte from its start: odd-length runs that start on an odd bit are told from
// those that start on an even bit by adding each run's start to it, which carries past its end.
inline std::uint64_t escaped_bytes(std::uint64_t backslash, bool* carry) {
  constexpr std::uint64_t kEvenBits = 0x5555555555555555;
  const std::uint64_t follows_backslash = backslash << 1;
  const std::uint64_t odd_starts = backslash & ~kEvenBits & ~follows_backslash;
  std::uint64_t even_runs_end = 0;
  *carry = __builtin_add_overflow(odd_starts, backslash, &even_runs_end);
  return (kEvenBits ^ (even_runs_end << 1)) & follows_backslash;
}

// From p[i], the first byte of a string's content that is not escaped (a string's content
// starts so; so does what follows a whole escape), reads 64-byte blocks to the first byte the
// scanner must look at: the closing '"', a control character, or the backslash of an escape
// other than a one-character one (\u, or an invalid one). Returns its index, or where fewer than
// 64 bytes were left (never inside an escape): everything before the index is valid content.
inline std::size_t skip_escaped_blocks(const char* p, std::size_t i, std::size_t n) {
  while (i + 64 <= n) {
    const StringBlockMasks m = string_block_masks(p + i);
    bool carry = false;
    std::uint64_t stops = m.quote | m.control;
    if (m.backslash != 0) {
      const std::uint64_t escaped = escaped_bytes(m.backslash, &carry);
      // An escaped byte at bit 0 would need its backslash before the block, which never is.
      stops = (stops & ~escaped) | ((escaped & ~simple_escape_bytes(p + i)) >> 1);
    }
    if (stops != 0) return i + static_cast<std::size_t>(std::countr_zero(stops));
    // A backslash that escapes the next block's first byte starts the next block.
    i += carry ? 63 : 64;
  }
  return i;
}

}  // namespace yurthub::base::detail
