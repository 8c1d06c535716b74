// One chunk of an HTTP/1.1 chunked body, framed as an apiserver frames it, for the tests that
// script an apiserver's bytes (test/hub/*_test.cc, proxy_fixture.h, test/net/scripted_apiserver.h).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace yurthub::test_support {

inline std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size).append(data).append("\r\n");
}

}  // namespace yurthub::test_support
