// A small Prometheus metrics registry: counter, gauge and histogram families with fixed label
// names, rendered in the text exposition format (version 0.0.4) for GET /metrics on the admin port.
// Thread-safe: series values are atomics; a family's label-set map is guarded by its own mutex.
// Every family holds at most `max_series` label sets (label values can come from clients, e.g.
// the User-Agent); further label sets all land in one extra series whose label values are all
// "overflow". A family without labels has its single series from the start (rendered as 0).
// Used by hub_metrics.h (the hub's metric set) and by tests.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace yurthub::base {

// Label values can come from clients (a User-Agent): each is cut to this many bytes, so a series
// costs a bounded amount whatever a client sends.
inline constexpr std::size_t kMaxLabelValueBytes = 128;

class Counter {
 public:
  void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void set(std::int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void add(std::int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>* bounds);  // bounds: ascending upper bounds
  void observe(double value);
  // Cumulative bucket counts (one per bound, then +Inf), sum and count, read without tearing
  // guarantees across fields (acceptable for Prometheus scrapes).
  std::vector<std::uint64_t> cumulative_counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double>* bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_->size() + 1
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

enum class MetricType { Counter, Gauge, Histogram };

// Orders label-value lists lexicographically; transparent, so a lookup with string_views does not
// build a std::vector<std::string> key (with() runs on every proxied request).
struct LabelValuesLess {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(),
        [](std::string_view x, std::string_view y) { return x < y; });
  }
};

// A named metric with a fixed list of label names; series are created on first use.
template <class Series>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::size_t max_series, std::vector<double> bounds = {});

  // Returns the series for these label values (one per label name, in order). The reference stays
  // valid for the registry's lifetime. REQUIRES: label_values.size() == label_names().size().
  Series& with(std::initializer_list<std::string_view> label_values);
  Series& with(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Appends this family's exposition text (HELP, TYPE and one line per series/bucket).
  void render(std::string& out) const;

 private:
  // Finds or creates the series for `values` (a range of string-likes). REQUIRES: mutex_ held.
  template <class Values>
  Series& find_or_create(const Values& values);

  std::string name_, help_;
  std::vector<std::string> label_names_;
  std::size_t max_series_;
  std::vector<double> bounds_;  // histograms only
  mutable std::mutex mutex_;    // guards series_ and index_ (the maps, not the values)
  std::map<std::vector<std::string>, std::unique_ptr<Series>, LabelValuesLess> series_;
  // The same series by their label values joined into one string (length-prefixed), for the
  // lookup on every request: a hash of one string, where series_ compares vectors of strings
  // (callgrind put that at 4% of a small GET). series_ stays for rendering in order.
  struct JoinedHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view joined) const {
      return std::hash<std::string_view>{}(joined);
    }
  };
  std::unordered_map<std::string, Series*, JoinedHash, std::equal_to<>> index_;
};

// Defined in metrics.cc for exactly these three series types.
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class MetricsRegistry {
 public:
  static constexpr std::size_t kDefaultMaxSeries = 2000;

  // Registering the same name twice is a programming error (asserted).
  CounterFamily& counter(std::string name, std::string help, std::vector<std::string> labels,
                         std::size_t max_series = kDefaultMaxSeries);
  GaugeFamily& gauge(std::string name, std::string help, std::vector<std::string> labels,
                     std::size_t max_series = kDefaultMaxSeries);
  HistogramFamily& histogram(std::string name, std::string help, std::vector<std::string> labels,
                             std::vector<double> bounds,
                             std::size_t max_series = kDefaultMaxSeries);

  // The whole registry in Prometheus text format, families in registration order.
  std::string render() const;

 private:
  mutable std::mutex mutex_;  // guards the three vectors (registration vs render)
  std::vector<std::unique_ptr<CounterFamily>> counters_;
  std::vector<std::unique_ptr<GaugeFamily>> gauges_;
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;
  std::vector<std::pair<MetricType, std::size_t>> order_;
};

// Escapes a label value for the exposition format (backslash, double quote, newline).
std::string escape_label_value(std::string_view value);

}  // namespace yurthub::base
