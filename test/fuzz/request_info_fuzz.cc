// Fuzz target for kube/request_info.h: classify_request() on a method, request-target and
// User-Agent (the input's three NUL-separated parts), plus the percent-decoding and query
// iteration it is built on and origin_form on the target; and for kube/bearer_token.h on the
// third part as an Authorization header and as a token. Oracles: decoding never grows the
// text; the component is the lowercased User-Agent before its first '/'; an origin form is a
// path no longer than the target and its '/'; a bearer token is a piece of its header without
// a space; a JWT's claims are no longer than the token. Also kube/watch_list.h's option rules on
// the classified request (a refusal is a 422 with a cause; a streaming list is a watch), and
// kube/media_type.h's Accept readers on the third part (a JSON Accept takes the JSON answer).
#include "kube/request_info.h"

#include <algorithm>
#include <cctype>

#include "kube/bearer_token.h"
#include "kube/media_type.h"
#include "kube/watch_list.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  const kube::RequestInfo info = kube::classify_request(parts[0], parts[1], parts[2]);
  (void)info.is_long_running();
  std::string component(parts[2].substr(0, parts[2].find('/')));
  std::transform(component.begin(), component.end(), component.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  fuzz::check(info.component == component, "component is not the User-Agent's first part");
  fuzz::check(info.path.size() <= parts[1].size(), "decoding grew");
  std::string scratch;
  if (const auto decoded = kube::query_unescape(parts[1], scratch)) {
    fuzz::check(decoded->size() <= parts[1].size(), "decoding grew");
  }
  if (const auto origin = kube::origin_form(parts[1])) {
    fuzz::check(origin->starts_with('/') && origin->size() <= parts[1].size() + 1,
                "origin form not a path within the target");
  }
  const std::string_view query = parts[1].substr(std::min(parts[1].find('?'), parts[1].size()));
  std::size_t bytes = 0;
  kube::for_each_query_param(query, [&](std::string_view key, std::string_view value) {
    bytes += key.size() + value.size();
  });
  fuzz::check(bytes <= query.size(), "query parameters longer than the query");
  if (const auto refused = kube::invalid_list_options(info)) {
    fuzz::check(refused->code == 422 && !refused->details.causes.empty(),
                "a refusal of list options that is not a 422 with causes");
  }
  fuzz::check(!kube::is_streaming_list(info) || info.is_watch(), "a streaming list not a watch");
  fuzz::check(!kube::accepts_json(parts[2]) || kube::accepts_json_answer(parts[2]),
              "an Accept that takes JSON but not the hub's JSON answer");
  if (const auto token = kube::bearer_token(parts[2])) {
    fuzz::check(token->size() < parts[2].size() && token->find(' ') == std::string_view::npos,
                "a bearer token that is not a word of its header");
  }
  if (const auto claims = kube::read_jwt_claims(parts[2])) {
    for (const std::string* s : {&claims->issuer, &claims->subject, &claims->namespace_name,
                                 &claims->service_account, &claims->pod_name, &claims->pod_uid}) {
      fuzz::check(s->size() <= parts[2].size(), "a claim longer than the token");
    }
  }
  return 0;
}
