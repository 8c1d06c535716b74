// Log lines (base/log.h): parts of a line come from clients, so control characters are escaped
// and one call is one line.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/log.h"

namespace yurthub::log {
namespace {

// What YH_LOG writes to stderr while `body` runs.
template <class Body>
std::string captured_stderr(Body body) {
  char path[] = "/tmp/yurthub-log-test-XXXXXX";
  const int fd = ::mkstemp(path);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fd, STDERR_FILENO);
  body();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  ::unlink(path);
  return ss.str();
}

TEST(Log, ClientTextCannotForgeLinesOrEscapeSequences) {
  const std::string path = "/api/v1/pods\nE1123 00:00:00.000000 1 fake.cc:1] forged\x1b[31m";
  const std::string out = captured_stderr([&] { YH_LOG(Warning) << "GET " << path; });
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find(R"(/api/v1/pods\nE1123 00:00:00.000000 1 fake.cc:1] forged\x1b[31m)"),
            std::string::npos)
      << out;
  const std::string huge(100000, 'a');
  const std::string bounded = captured_stderr([&] { YH_LOG(Warning) << huge; });
  EXPECT_LT(bounded.size(), 9000u);
  EXPECT_NE(bounded.find("...(truncated)"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::log
