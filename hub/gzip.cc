// GzipDecoder: the RFC 1952 member (header, raw deflate body, CRC-32/ISIZE trailer) read as a
// small state machine, so every field may arrive split across feed() calls. The deflate body goes
// through Beast's zlib port (raw inflate, 32 KiB window); the header and trailer are parsed here.
// Called by the cache's response tap and the filter chain; one decoder per response.
#include "hub/gzip.h"

#include <algorithm>
#include <array>
#include <boost/beast/zlib/error.hpp>
#include <boost/beast/zlib/inflate_stream.hpp>
#include <boost/crc.hpp>
#include <cstdint>
#include <utility>

namespace yurthub::hub {
namespace {

namespace zlib = boost::beast::zlib;

// RFC 1952 2.3.1 FLG bits.
constexpr std::uint8_t kFhcrc = 0x02;
constexpr std::uint8_t kFextra = 0x04;
constexpr std::uint8_t kFname = 0x08;
constexpr std::uint8_t kFcomment = 0x10;
constexpr std::uint8_t kFreserved = 0xE0;

constexpr std::size_t kFixedHeaderBytes = 10;
constexpr std::size_t kTrailerBytes = 8;
// Output is produced in steps of this much (the size of Impl::scratch).
constexpr std::size_t kOutputStep = 16 * 1024;
// Beast's bit reservoir holds at most 32 bits: the most it can read past the deflate end.
constexpr std::size_t kRecentBytes = 8;

enum class State : std::uint8_t {
  kFixed,
  kExtraLen,
  kExtra,
  kName,
  kComment,
  kHeaderCrc,
  kBody,
  kTrailer,
  kDone,
  kFailed,
};

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

}  // namespace

struct GzipDecoder::Impl {
  explicit Impl(std::size_t max) : max_output(max) { inflate.reset(15); }

  Status fail(std::string reason);
  bool take(std::string_view in, std::size_t* pos, std::size_t want);
  void skip_field(std::string_view in, std::size_t* pos);
  Status header_step(std::string_view in, std::size_t* pos);
  void next_header_field();
  Status body(std::string_view in, std::size_t* pos, std::string& out);
  Status inflate_step(zlib::z_params& zs, std::string& out, bool* finished);
  Status trailer(std::string_view in, std::size_t* pos);
  void remember(const std::uint8_t* first, std::size_t n);

  zlib::inflate_stream inflate;
  boost::crc_32_type crc;         // of the output
  boost::crc_32_type header_crc;  // of the header bytes read so far, for FHCRC
  std::array<std::uint8_t, kFixedHeaderBytes> field{};  // the fixed-size field being read
  std::size_t field_have = 0;
  std::size_t extra_left = 0;
  std::array<char, kOutputStep> scratch;
  std::array<std::uint8_t, kRecentBytes> recent{};  // the last bytes given to inflate, oldest first
  std::size_t recent_have = 0;
  std::uint64_t total_out = 0;
  std::uint64_t offset = 0;  // compressed bytes before the current feed() call
  std::size_t max_output;
  std::string error;
  std::uint8_t flags = 0;
  State state = State::kFixed;
};

GzipDecoder::GzipDecoder(std::size_t max_output_bytes)
    : impl_(std::make_unique<Impl>(max_output_bytes)) {}
GzipDecoder::~GzipDecoder() = default;
GzipDecoder::GzipDecoder(GzipDecoder&&) noexcept = default;
GzipDecoder& GzipDecoder::operator=(GzipDecoder&&) noexcept = default;

bool GzipDecoder::done() const { return impl_->state == State::kDone; }

Status GzipDecoder::feed(std::string_view in, std::string& out) {
  Impl& d = *impl_;
  if (d.state == State::kFailed) return make_error(d.error);
  std::size_t pos = 0;
  while (pos < in.size()) {
    Status s;
    if (d.state == State::kBody) {
      s = d.body(in, &pos, out);
    } else if (d.state == State::kTrailer) {
      s = d.trailer(in, &pos);
    } else if (d.state == State::kDone) {
      s = d.fail("data after the gzip trailer at byte " + std::to_string(d.offset + pos));
    } else {
      s = d.header_step(in, &pos);
    }
    if (!s.ok()) return s;
  }
  d.offset += in.size();
  return {};
}

Status GzipDecoder::Impl::fail(std::string reason) {
  error = "gzip: " + std::move(reason);
  state = State::kFailed;
  return make_error(error);
}

// Accumulates a fixed-size field into `field`; true once it holds `want` bytes.
bool GzipDecoder::Impl::take(std::string_view in, std::size_t* pos, std::size_t want) {
  const std::size_t n = std::min(want - field_have, in.size() - *pos);
  std::copy_n(in.data() + *pos, n, field.data() + field_have);
  field_have += n;
  *pos += n;
  return field_have == want;
}

// FEXTRA data, FNAME and FCOMMENT are skipped (only covered by the header CRC).
void GzipDecoder::Impl::skip_field(std::string_view in, std::size_t* pos) {
  const std::string_view rest = in.substr(*pos);
  std::size_t n;
  if (state == State::kExtra) {
    n = std::min(extra_left, rest.size());
    extra_left -= n;
    if (extra_left == 0) next_header_field();
  } else {  // kName or kComment: zero-terminated
    const std::size_t nul = rest.find('\0');
    n = nul == std::string_view::npos ? rest.size() : nul + 1;
    if (nul != std::string_view::npos) next_header_field();
  }
  header_crc.process_bytes(rest.data(), n);
  *pos += n;
}

// Moves to the next optional header field present, in RFC 1952 order, or to the body.
void GzipDecoder::Impl::next_header_field() {
  static constexpr std::pair<State, std::uint8_t> kOrder[] = {{State::kExtraLen, kFextra},
                                                              {State::kName, kFname},
                                                              {State::kComment, kFcomment},
                                                              {State::kHeaderCrc, kFhcrc}};
  field_have = 0;
  for (const auto& [next, bit] : kOrder) {
    if (next > state && (flags & bit) != 0) {
      state = next;
      return;
    }
  }
  state = State::kBody;
}

Status GzipDecoder::Impl::header_step(std::string_view in, std::size_t* pos) {
  switch (state) {
    case State::kFixed:
      if (!take(in, pos, kFixedHeaderBytes)) return {};
      if (field[0] != 0x1f || field[1] != 0x8b) return fail("not gzip data (bad magic)");
      if (field[2] != 8) return fail("unsupported compression method " + std::to_string(field[2]));
      if (field[3] & kFreserved) return fail("reserved header flags set");
      flags = field[3];
      header_crc.process_bytes(field.data(), kFixedHeaderBytes);
      next_header_field();
      return {};
    case State::kExtraLen:
      if (!take(in, pos, 2)) return {};
      header_crc.process_bytes(field.data(), 2);
      extra_left = static_cast<std::size_t>(field[0]) | static_cast<std::size_t>(field[1]) << 8;
      state = State::kExtra;
      if (extra_left == 0) next_header_field();
      return {};
    case State::kHeaderCrc: {
      const std::uint32_t expect = header_crc.checksum() & 0xffff;
      if (!take(in, pos, 2)) return {};
      if ((field[0] | static_cast<std::uint32_t>(field[1]) << 8) != expect) {
        // Where the field starts, which it may have done in an earlier feed().
        return fail("header CRC mismatch at byte " + std::to_string(offset + *pos - 2));
      }
      next_header_field();
      return {};
    }
    default:  // kExtra, kName, kComment
      skip_field(in, pos);
      return {};
  }
}

Status GzipDecoder::Impl::body(std::string_view in, std::size_t* pos, std::string& out) {
  zlib::z_params zs;
  zs.next_in = in.data() + *pos;
  zs.avail_in = in.size() - *pos;
  bool finished = false;
  while (!finished) {
    const Status s = inflate_step(zs, out, &finished);
    if (!s.ok()) return s;
  }
  *pos = in.size() - zs.avail_in;
  if (state != State::kTrailer) return {};
  // Beast may have read whole bytes of the trailer into its bit reservoir (zs.data_type: bits
  // left, plus 64 for the last block); they are the last bytes it consumed.
  const std::size_t unused = static_cast<std::size_t>(zs.data_type & 63) / 8;
  if (unused > recent_have) return fail("inflate read past the deflate stream");
  std::copy_n(recent.data() + recent_have - unused, unused, field.data());
  field_have = unused;
  return {};
}

// One write() call into `scratch`, whose output is then appended to `out` (growing `out` directly
// would zero-fill fresh room on every call, which costs more than the copy when input is small).
Status GzipDecoder::Impl::inflate_step(zlib::z_params& zs, std::string& out, bool* finished) {
  const std::uint64_t remaining = max_output - total_out;
  std::size_t room = scratch.size();
  if (remaining < room) room = static_cast<std::size_t>(remaining) + 1;  // +1 detects overflow
  zs.next_out = scratch.data();
  zs.avail_out = room;
  const auto* in_before = static_cast<const std::uint8_t*>(zs.next_in);
  const std::size_t avail_before = zs.avail_in;
  boost::system::error_code ec;
  inflate.write(zs, zlib::Flush::none, ec);
  const std::size_t produced = room - zs.avail_out;
  if (produced > remaining) {
    return fail("decompressed size over the bound of " + std::to_string(max_output) + " bytes");
  }
  out.append(scratch.data(), produced);
  crc.process_bytes(scratch.data(), produced);
  total_out += produced;
  remember(in_before, avail_before - zs.avail_in);
  if (ec == zlib::error::end_of_stream) {
    state = State::kTrailer;
    *finished = true;
    return {};
  }
  if (ec && ec != zlib::error::need_buffers) return fail("corrupt deflate data: " + ec.message());
  const bool progress = produced > 0 || avail_before != zs.avail_in;
  if (zs.avail_in == 0 && zs.avail_out > 0) {
    *finished = true;  // all input consumed and all output flushed
  } else if (!progress) {
    return fail("inflate made no progress");
  }
  return {};
}

void GzipDecoder::Impl::remember(const std::uint8_t* first, std::size_t n) {
  if (n >= kRecentBytes) {
    std::copy_n(first + n - kRecentBytes, kRecentBytes, recent.data());
    recent_have = kRecentBytes;
    return;
  }
  const std::size_t keep = std::min(recent_have, kRecentBytes - n);
  std::copy(recent.data() + recent_have - keep, recent.data() + recent_have, recent.data());
  std::copy_n(first, n, recent.data() + keep);
  recent_have = keep + n;
}

Status GzipDecoder::Impl::trailer(std::string_view in, std::size_t* pos) {
  if (!take(in, pos, kTrailerBytes)) return {};
  if (le32(field.data()) != crc.checksum()) return fail("CRC-32 mismatch in the trailer");
  if (le32(field.data() + 4) != static_cast<std::uint32_t>(total_out)) {
    return fail("length mismatch in the trailer");
  }
  state = State::kDone;
  return {};
}

}  // namespace yurthub::hub
