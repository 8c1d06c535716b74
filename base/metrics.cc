// The metrics registry and its Prometheus text rendering (exposition format 0.0.4); see metrics.h.
// Series values are updated lock-free by every worker; with() takes the family's mutex only to
// find or create a series; render() runs on the admin listener for GET /metrics.
#include "base/metrics.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>

namespace yurthub::base {
namespace {

constexpr std::string_view kOverflow = "overflow";

// A float as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it, which is what Prometheus'
// client_golang emits: shortest round-trip digits, exponent form below 1e-4 and from 1e6 up.
std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view s(buf, static_cast<std::size_t>(sci.ptr - buf));
  int exponent = 0;
  const std::string_view exp_text = s.substr(s.find('e') + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                  exp_text.data() + exp_text.size(), exponent);
  if (exponent < -4 || exponent >= 6) return std::string(s);
  auto fixed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

void escape_into(std::string& out, std::string_view value, bool quotes) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quotes ? "\\\"" : "\"";
        break;
      default:
        out.push_back(c);
    }
  }
}

// `a="x",b="y"` (no braces), for the given names and values.
std::string label_pairs(const std::vector<std::string>& names,
                        const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += names[i];
    out += "=\"";
    escape_into(out, values[i], true);
    out.push_back('"');
  }
  return out;
}

// One sample line: name{labels} value
void write_sample(std::string& out, std::string_view name, std::string_view suffix,
                  const std::string& labels, const std::string& value) {
  out.append(name).append(suffix);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(value).append("\n");
}

template <class Series>
constexpr std::string_view type_name() {
  if constexpr (std::is_same_v<Series, Counter>) return "counter";
  if constexpr (std::is_same_v<Series, Gauge>) return "gauge";
  return "histogram";
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  escape_into(out, value, true);
  return out;
}

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds->size() + 1)) {}

void Histogram::observe(double value) {
  // Bucket i counts values <= bounds[i]; NaN lands in +Inf, as in client_golang.
  std::size_t i = bounds_->size();
  if (!std::isnan(value)) {
    i = static_cast<std::size_t>(std::lower_bound(bounds_->begin(), bounds_->end(), value) -
                                 bounds_->begin());
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> out(bounds_->size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

template <class Series>
Family<Series>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                       std::size_t max_series, std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      max_series_(max_series),
      bounds_(std::move(bounds)) {
  // The +Inf bucket is always rendered; an explicit +Inf bound would duplicate it.
  if (!bounds_.empty() && std::isinf(bounds_.back()) && bounds_.back() > 0) bounds_.pop_back();
  assert(std::is_sorted(bounds_.begin(), bounds_.end()));
  if (label_names_.empty()) with(std::vector<std::string>{});  // `name 0` from the first scrape
}

template <class Series>
Series& Family<Series>::with(std::initializer_list<std::string_view> label_values) {
  assert(label_values.size() == label_names_.size());
  thread_local std::string joined;  // reused: no allocation per lookup
  joined.clear();
  for (std::string_view value : label_values) {
    value = value.substr(0, kMaxLabelValueBytes);
    const auto size = static_cast<std::uint32_t>(value.size());
    joined.append(reinterpret_cast<const char*>(&size), sizeof size).append(value);
  }
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(std::string_view(joined)); it != index_.end()) return *it->second;
  Series& series = find_or_create(label_values);
  // Label sets past max_series_ share the overflow series and stay out of the index, which is
  // thus bounded like series_.
  if (index_.size() <= max_series_) index_.emplace(joined, &series);
  return series;
}

template <class Series>
Series& Family<Series>::with(const std::vector<std::string>& label_values) {
  assert(label_values.size() == label_names_.size());
  std::lock_guard lock(mutex_);
  return find_or_create(label_values);
}

template <class Series>
template <class Values>
Series& Family<Series>::find_or_create(const Values& values) {
  std::vector<std::string> key;
  key.reserve(values.size());
  for (const auto& value : values)
    key.emplace_back(std::string_view(value).substr(0, kMaxLabelValueBytes));
  if (auto it = series_.find(key); it != series_.end()) return *it->second;
  // Label values can come from clients (User-Agent): cap the series, then share one overflow.
  const std::vector<std::string> overflow(label_names_.size(), std::string(kOverflow));
  const auto overflow_it = series_.find(overflow);
  const std::size_t real = series_.size() - (overflow_it == series_.end() ? 0 : 1);
  if (real >= max_series_) {
    if (overflow_it != series_.end()) return *overflow_it->second;
    key = overflow;
  }
  std::unique_ptr<Series> series;
  if constexpr (std::is_same_v<Series, Histogram>) {
    series = std::make_unique<Histogram>(&bounds_);
  } else {
    series = std::make_unique<Series>();
  }
  return *series_.emplace(std::move(key), std::move(series)).first->second;
}

template <class Series>
void Family<Series>::render(std::string& out) const {
  out.append("# HELP ").append(name_).append(" ");
  escape_into(out, help_, false);
  out.append("\n# TYPE ").append(name_).append(" ").append(type_name<Series>()).append("\n");
  std::lock_guard lock(mutex_);
  for (const auto& [values, series] : series_) {
    const std::string labels = label_pairs(label_names_, values);
    if constexpr (std::is_same_v<Series, Histogram>) {
      const std::vector<std::uint64_t> counts = series->cumulative_counts();
      const std::string le_prefix = labels.empty() ? "le=\"" : labels + ",le=\"";
      for (std::size_t i = 0; i < counts.size(); ++i) {
        std::string bucket_labels = le_prefix;
        bucket_labels += i < bounds_.size() ? format_double(bounds_[i]) : "+Inf";
        bucket_labels += '"';
        write_sample(out, name_, "_bucket", bucket_labels, std::to_string(counts[i]));
      }
      write_sample(out, name_, "_sum", labels, format_double(series->sum()));
      // _count from the same snapshot as the buckets, so it always equals the +Inf bucket.
      write_sample(out, name_, "_count", labels, std::to_string(counts.back()));
    } else {
      write_sample(out, name_, "", labels, std::to_string(series->value()));
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

namespace {

template <class F>
bool has_name(const std::vector<std::unique_ptr<F>>& families, const std::string& name) {
  return std::any_of(families.begin(), families.end(),
                     [&](const auto& f) { return f->name() == name; });
}

}  // namespace

CounterFamily& MetricsRegistry::counter(std::string name, std::string help,
                                        std::vector<std::string> labels, std::size_t max_series) {
  std::lock_guard lock(mutex_);
  assert(!has_name(counters_, name) && !has_name(gauges_, name) && !has_name(histograms_, name));
  order_.emplace_back(MetricType::Counter, counters_.size());
  return *counters_.emplace_back(std::make_unique<CounterFamily>(std::move(name), std::move(help),
                                                                 std::move(labels), max_series));
}

GaugeFamily& MetricsRegistry::gauge(std::string name, std::string help,
                                    std::vector<std::string> labels, std::size_t max_series) {
  std::lock_guard lock(mutex_);
  assert(!has_name(counters_, name) && !has_name(gauges_, name) && !has_name(histograms_, name));
  order_.emplace_back(MetricType::Gauge, gauges_.size());
  return *gauges_.emplace_back(std::make_unique<GaugeFamily>(std::move(name), std::move(help),
                                                             std::move(labels), max_series));
}

HistogramFamily& MetricsRegistry::histogram(std::string name, std::string help,
                                            std::vector<std::string> labels,
                                            std::vector<double> bounds, std::size_t max_series) {
  std::lock_guard lock(mutex_);
  assert(!has_name(counters_, name) && !has_name(gauges_, name) && !has_name(histograms_, name));
  order_.emplace_back(MetricType::Histogram, histograms_.size());
  return *histograms_.emplace_back(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(labels), max_series, std::move(bounds)));
}

std::string MetricsRegistry::render() const {
  std::string out;
  std::lock_guard lock(mutex_);
  for (const auto& [type, index] : order_) {
    switch (type) {
      case MetricType::Counter:
        counters_[index]->render(out);
        break;
      case MetricType::Gauge:
        gauges_[index]->render(out);
        break;
      case MetricType::Histogram:
        histograms_[index]->render(out);
        break;
    }
  }
  return out;
}

}  // namespace yurthub::base
