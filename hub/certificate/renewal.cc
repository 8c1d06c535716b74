// The certificates' renewal schedule; see renewal.h.
#include "hub/certificate/renewal.h"

#include <ctime>
#include <random>

#include "base/clock.h"
#include "net/x509.h"

namespace yurthub::hub {
using std::chrono::system_clock;

system_clock::time_point renewal_time(system_clock::time_point not_before,
                                      system_clock::time_point not_after) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const auto lifetime = not_after - not_before;
  std::uniform_real_distribution<double> fraction(0.7, 0.9);
  return not_before +
         std::chrono::duration_cast<system_clock::duration>(lifetime * fraction(random));
}

std::string utc_text(system_clock::time_point t, const char* format) {
  const std::time_t seconds = system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

boost::asio::awaitable<void> renew_forever(net::Timer& wake, Renewal renewal) {
  bool renewed_here = false;
  for (;;) {
    auto info = net::inspect_certificate(renewal.current());
    auto when = base::WallClock::now();
    if (info) {
      when = renewal_time(info->not_before, info->not_after);
      const auto now = base::WallClock::now();
      if (renewed_here) when = std::max(when, now + (info->not_after - now) / 2);
    }
    YH_LOG(Info) << renewal.what << " renewal at " << utc_text(when);
    // Waits in steps of at most a minute, so a wall clock that jumps is noticed.
    while (base::WallClock::now() < when) {
      wake.expires_after(std::min<std::chrono::nanoseconds>(when - base::WallClock::now(),
                                                            std::chrono::minutes(1)));
      co_await wake.async_wait(net::kNoThrow);
    }
    std::chrono::milliseconds backoff{std::chrono::seconds(1)};
    for (;;) {
      Status renewed = co_await renewal.renew();
      if (renewed) {
        renewal.renewals->with({"success"}).inc();
        renewed_here = true;
        break;
      }
      renewal.renewals->with({"failure"}).inc();
      YH_LOG(Warning) << "cannot renew the " << renewal.what << " (retry in " << backoff.count()
                      << " ms): " << renewed.error().message;
      wake.expires_after(backoff);
      co_await wake.async_wait(net::kNoThrow);
      backoff = std::min(backoff * 2, renewal.retry_max);
    }
  }
}

}  // namespace yurthub::hub
