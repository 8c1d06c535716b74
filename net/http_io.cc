// Hub-made responses and hop-by-hop header handling; see http_io.h.
#include "net/http_io.h"

#include <charconv>
#include <iterator>
#include <sstream>
#include <string>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>

namespace yurthub::net {
namespace http = boost::beast::http;

http::response<http::string_body> simple_response(unsigned version, bool keep_alive, unsigned code,
                                                  std::string_view content_type, std::string body,
                                                  std::optional<int> retry_after) {
  http::response<http::string_body> res{static_cast<http::status>(code), version};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  if (retry_after) res.set(http::field::retry_after, std::to_string(*retry_after));
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

std::string wire_text(const http::response<http::string_body>& response) {
  std::ostringstream out;
  out << response;
  return std::move(out).str();
}

bool is_malformed_http(const boost::system::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_version).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

template <class Allocator>
bool is_upgrade_request(const http::basic_fields<Allocator>& fields) {
  auto upgrade = fields.find(http::field::upgrade);
  if (upgrade == fields.end() || upgrade->value().empty()) return false;
  for (const auto token : http::token_list{fields[http::field::connection]}) {
    if (boost::beast::iequals(token, "upgrade")) return true;
  }
  return false;
}

namespace {

// Headers a Connection token may not remove (see strip_hop_by_hop in http_io.h).
bool protected_from_connection(http::field name) {
  return name == http::field::content_length || name == http::field::transfer_encoding ||
         name == http::field::host || name == http::field::authorization;
}

}  // namespace

bool istarts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         boost::beast::iequals(text.substr(0, prefix.size()), prefix);
}

template <class Allocator>
bool carries_bearer_token(const http::basic_fields<Allocator>& fields) {
  const auto it = fields.find(http::field::authorization);
  if (it == fields.end()) return false;
  const std::string_view value(it->value().data(), it->value().size());
  constexpr std::string_view kScheme = "bearer ";
  if (!istarts_with(value, kScheme)) return false;
  return value.find_first_not_of(' ', kScheme.size()) != std::string_view::npos;
}

template <class Allocator>
void set_body_framing(http::basic_fields<Allocator>& fields, bool chunked,
                      std::optional<std::uint64_t> content_length) {
  fields.erase(http::field::content_length);
  fields.erase(http::field::transfer_encoding);
  if (chunked) {
    fields.set(http::field::transfer_encoding, "chunked");
  } else if (content_length) {
    fields.set(http::field::content_length, std::to_string(*content_length));
  }
}

template <class Allocator>
void strip_hop_by_hop(http::basic_fields<Allocator>& fields, bool keep_upgrade,
                      std::optional<BodyFraming> framing) {
  // One pass over the fields comparing known names as enums: erasing each hop-by-hop header by
  // name was seven lookups in the fields' tree for every request and response.
  const std::string connection(fields[http::field::connection]);  // erased below
  const http::token_list named{connection};
  // The framing the message leaves with: at most one header of it is kept, and only as wanted.
  const bool chunked = framing && framing->chunked;
  char digits[24];
  std::string_view wanted_length;
  if (framing && !chunked && framing->content_length) {
    const auto end = std::to_chars(digits, digits + sizeof digits, *framing->content_length).ptr;
    wanted_length = std::string_view(digits, static_cast<std::size_t>(end - digits));
  }
  bool length_kept = false;
  bool chunked_kept = false;
  for (auto it = fields.begin(); it != fields.end();) {
    bool drop = false;
    const std::string_view value(it->value().data(), it->value().size());
    switch (it->name()) {
      case http::field::connection:
      case http::field::upgrade:
        drop = !keep_upgrade;
        break;
      case http::field::keep_alive:
      case http::field::proxy_connection:
      case http::field::proxy_authorization:
      case http::field::te:
      case http::field::trailer:
        drop = true;
        break;
      case http::field::content_length:  // a Connection token never removes it
        if (!framing) break;
        drop = length_kept || wanted_length.empty() || value != wanted_length;
        length_kept = length_kept || !drop;
        break;
      case http::field::transfer_encoding:  // nor this
        if (!framing) break;
        drop = chunked_kept || !chunked || value != "chunked";
        chunked_kept = chunked_kept || !drop;
        break;
      default:
        // Most messages have no Connection header: skip parsing an empty token list per field.
        if (connection.empty() || protected_from_connection(it->name())) break;
        for (const auto token : named) {
          if (boost::beast::iequals(token, it->name_string())) {
            drop = !(keep_upgrade && boost::beast::iequals(token, "upgrade"));
            break;
          }
        }
    }
    it = drop ? fields.erase(it) : std::next(it);
  }
  if (chunked && !chunked_kept) fields.insert(http::field::transfer_encoding, "chunked");
  if (!wanted_length.empty() && !length_kept) {
    fields.insert(http::field::content_length, wanted_length);
  }
}

// The fields on the heap (hub-made messages, tests) and in a HeaderArena (the relayed heads).
template bool is_upgrade_request(const http::fields&);
template bool is_upgrade_request(const ArenaFields&);
template bool carries_bearer_token(const http::fields&);
template bool carries_bearer_token(const ArenaFields&);
template void set_body_framing(http::fields&, bool, std::optional<std::uint64_t>);
template void set_body_framing(ArenaFields&, bool, std::optional<std::uint64_t>);
template void strip_hop_by_hop(http::fields&, bool, std::optional<BodyFraming>);
template void strip_hop_by_hop(ArenaFields&, bool, std::optional<BodyFraming>);

}  // namespace yurthub::net
