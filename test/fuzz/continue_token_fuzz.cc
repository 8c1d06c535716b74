// Fuzz target for cache/local_proxy.h decode_continue, which reads the `continue` parameter of a
// paged list the cache answers while offline: any client on the node may send any token, and
// kubelet sends the apiserver's own, from before the link dropped. The first byte picks the form
// of the rest: 0, the parameter as a client sends it (read from a list's query by
// kube::classify_request, percent-decoding included, and also decoded as it is); else the JSON
// inside the token, made into "yh1." + base64url here, so the fuzzer reaches the JSON reader
// without having to learn base64. Oracles: a decoded point encodes to a token of base64url
// characters after "yh1." that decodes to the same point.
#include <string>

#include "base/base64.h"
#include "cache/local_proxy.h"
#include "kube/request_info.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

void decode(std::string_view token) {
  const auto point = cache::decode_continue(token);
  if (!point) return;
  const std::string again = cache::encode_continue(*point);
  fuzz::check(again.starts_with("yh1.") &&
                  again.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789-_",
                                          4) == std::string::npos,
              "an encoded token that is not yh1. and base64url");
  const auto back = cache::decode_continue(again);
  fuzz::check(back && back->set == point->set && back->namespace_name == point->namespace_name &&
                  back->name == point->name,
              "a point that does not survive encode + decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = fuzz::as_text(data + 1, size - 1);
  if (data[0] != 0) {
    decode("yh1." + base::encode_base64url(rest));
    return 0;
  }
  decode(rest);
  const std::string target =
      "/api/v1/namespaces/default/pods?limit=500&continue=" + std::string(rest);
  const kube::RequestInfo info = kube::classify_request("GET", target, "kubelet/v1.32.4");
  decode(info.continue_token);
  return 0;
}
