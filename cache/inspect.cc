// `yurthub cache ls|get|stats`; see inspect.h. Everything is read from one ReadView, so the output
// of a command is a consistent snapshot even while the hub keeps writing.
#include "cache/inspect.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/time_text.h"
#include "cache/journal_entry.h"
#include "cache/list_identity.h"
#include "cache/store.h"

namespace yurthub::cache {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr std::string_view kUsage =
    R"(usage: yurthub cache COMMAND   (reads the cache in --disk-cache-path, read-only)

commands:
  ls [COMPONENT[/RESOURCE]]          one line per cached list: identity, objects=, rv=
                                     (resourceVersion), state=complete|partial (",stale" after
                                     a failed write: it will be re-listed), synced= (last full
                                     list, RFC 3339 UTC, or never)
  get COMPONENT/RESOURCE/NAMESPACE/NAME
  get COMPONENT/RESOURCE/NAME        the stored JSON of an object (the second form for
                                     cluster-scoped ones), once per list holding it, each after a
                                     "# <identity>  resourceVersion=<rv>" line
  stats                              objects, JSON bytes, lists, map size and use, and the same
                                     per component with its last full sync

RESOURCE is RESOURCE[.VERSION[.GROUP]], spelled as in YurtHub's cache directories: pods,
pods.v1.core (core is the "" group), leases.v1.coordination.k8s.io. Omitted parts match any
version or group, so "pods" also matches pods.v1.core.

exit status: 0 ok, 1 error (no cache, object not cached), 2 bad usage
)";

// RESOURCE[.VERSION[.GROUP]]: resource and version names never contain dots; groups do.
struct ResourceFilter {
  std::string resource;
  std::optional<std::string> version;
  std::optional<std::string> group;

  bool matches(const ListIdentity& identity) const {
    return identity.resource == resource && (!version || identity.version == *version) &&
           (!group || identity.group == *group);
  }
};

std::optional<ResourceFilter> parse_resource(std::string_view text) {
  ResourceFilter filter;
  const std::size_t dot = text.find('.');
  filter.resource = std::string(text.substr(0, dot));
  if (filter.resource.empty()) return std::nullopt;
  if (dot == std::string_view::npos) return filter;
  const std::string_view rest = text.substr(dot + 1);
  const std::size_t dot2 = rest.find('.');
  filter.version = std::string(rest.substr(0, dot2));
  if (filter.version->empty()) return std::nullopt;
  if (dot2 == std::string_view::npos) return filter;
  filter.group = std::string(rest.substr(dot2 + 1));
  if (filter.group->empty()) return std::nullopt;
  if (*filter.group == "core") filter.group->clear();
  return filter;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

struct Entry {
  ListIdentity identity;
  ListRecord record;
};

// The list records of `component` ("" = all), optionally of one resource, in key order.
std::vector<Entry> load_entries(ReadView& view, std::string_view component,
                                const std::optional<ResourceFilter>& filter, std::ostream& err) {
  const std::string prefix = component.empty() ? "" : ListIdentity::component_prefix(component);
  std::vector<Entry> entries;
  for (auto& [key, record] : view.lists_with_prefix(prefix)) {
    auto identity = ListIdentity::parse(key);
    if (!identity) {
      err << "yurthub cache: skipping a list record with a malformed key\n";
      continue;
    }
    if (filter && !filter->matches(*identity)) continue;
    entries.push_back(Entry{std::move(*identity), std::move(record)});
  }
  return entries;
}

struct SetSize {
  std::uint64_t objects = 0;
  std::uint64_t json_bytes = 0;
};

SetSize measure_set(ReadView& view, std::uint32_t set) {
  SetSize size;
  if (set == 0) return size;
  view.scan(set, "", "", "", [&](std::string_view, std::string_view, const StoredObject& object) {
    ++size.objects;
    size.json_bytes += object.json.size();
    return true;
  });
  return size;
}

std::string rfc3339(std::int64_t unix_seconds) {
  if (unix_seconds <= 0) return "never";
  return base::rfc3339_utc(unix_seconds);
}

std::string state(const ListRecord& record) {
  return std::string(record.complete ? "complete" : "partial") + (record.stale ? ",stale" : "");
}

int usage(std::ostream& err) {
  err << kUsage;
  return kExitUsage;
}

// Opens the cache read-only; on failure prints one line and returns nullptr.
std::unique_ptr<Store> open_store(const std::string& cache_dir, std::ostream& err) {
  struct stat st {};
  if (::stat(cache_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    err << "yurthub cache: cache directory " << cache_dir << " does not exist\n";
    return nullptr;
  }
  StoreOptions options;
  options.directory = cache_dir;
  options.read_only = true;
  auto store = open_lmdb_store(options);
  if (!store) {
    err << "yurthub cache: " << store.error().message << "\n";
    return nullptr;
  }
  return std::move(*store);
}

int run_ls(const std::vector<std::string>& args, const std::string& cache_dir, std::ostream& out,
           std::ostream& err) {
  if (args.size() > 2) return usage(err);
  std::string component;
  std::optional<ResourceFilter> filter;
  if (args.size() == 2) {
    const std::vector<std::string> parts = split(args[1], '/');
    if (parts.size() > 2 || parts[0].empty()) return usage(err);
    component = parts[0];
    if (parts.size() == 2 && !(filter = parse_resource(parts[1]))) return usage(err);
  }
  auto store = open_store(cache_dir, err);
  if (!store) return kExitFailure;
  auto view = store->read();
  for (const Entry& entry : load_entries(*view, component, filter, err)) {
    out << entry.identity.describe()
        << "  objects=" << measure_set(*view, entry.record.set_id).objects
        << "  rv=" << entry.record.resource_version << "  state=" << state(entry.record)
        << "  synced=" << rfc3339(entry.record.synced_unix);
    if (entry.record.staging_id != 0) {  // a paginated list was being assembled
      out << "  staging=" << measure_set(*view, entry.record.staging_id).objects;
    }
    out << "\n";
  }
  return kExitOk;
}

int run_get(const std::vector<std::string>& args, const std::string& cache_dir, std::ostream& out,
            std::ostream& err) {
  if (args.size() != 2) return usage(err);
  const std::vector<std::string> parts = split(args[1], '/');
  if (parts.size() != 3 && parts.size() != 4) return usage(err);
  for (const std::string& part : parts) {
    if (part.empty()) return usage(err);
  }
  const auto filter = parse_resource(parts[1]);
  if (!filter) return usage(err);
  const std::string namespace_name = parts.size() == 4 ? parts[2] : "";
  const std::string& name = parts.back();
  auto store = open_store(cache_dir, err);
  if (!store) return kExitFailure;
  auto view = store->read();
  int found = 0;
  for (const Entry& entry : load_entries(*view, parts[0], filter, err)) {
    if (entry.record.set_id == 0) continue;
    auto object = view->object(entry.record.set_id, namespace_name, name);
    if (!object) continue;
    out << "# " << entry.identity.describe() << "  resourceVersion=" << object->resource_version
        << "\n"
        << object->json << "\n";  // json points into the view, which is still open
    ++found;
  }
  if (found == 0) {
    err << "yurthub cache: " << args[1] << " is not in the cache\n";
    return kExitFailure;
  }
  return kExitOk;
}

struct ComponentTotals {
  std::uint64_t lists = 0;
  SetSize size;
  std::int64_t last_sync = 0;
};

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "?";
  const std::uint64_t tenths = part * 1000 / whole;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

int run_stats(const std::vector<std::string>& args, const std::string& cache_dir, std::ostream& out,
              std::ostream& err) {
  if (args.size() != 1) return usage(err);
  auto store = open_store(cache_dir, err);
  if (!store) return kExitFailure;
  auto view = store->read();
  const StoreStats stats = store->stats();
  std::map<std::string, ComponentTotals> components;
  SetSize referenced;
  for (const Entry& entry : load_entries(*view, "", std::nullopt, err)) {
    ComponentTotals& totals = components[entry.identity.component];
    ++totals.lists;
    totals.last_sync = std::max(totals.last_sync, entry.record.synced_unix);
    for (std::uint32_t set : {entry.record.set_id, entry.record.staging_id}) {
      const SetSize size = measure_set(*view, set);
      totals.size.objects += size.objects;
      totals.size.json_bytes += size.json_bytes;
    }
  }
  for (const auto& [component, totals] : components) {
    referenced.objects += totals.size.objects;
    referenced.json_bytes += totals.size.json_bytes;
  }
  out << "objects: " << stats.objects << "\n"
      << "json_bytes: " << referenced.json_bytes << "\n"
      << "lists: " << stats.lists << "\n"
      << "map_size: " << stats.map_size << "\n"
      << "used_bytes: " << stats.used_bytes << " (" << percent(stats.used_bytes, stats.map_size)
      << " of the map)\n"
      // objects in no list's current or staging set: space a failed cleanup leaked
      << "unreferenced_objects: "
      << (stats.objects > referenced.objects ? stats.objects - referenced.objects : 0) << "\n";
  for (const auto& [component, totals] : components) {
    out << "component " << component << ": lists=" << totals.lists
        << " objects=" << totals.size.objects << " json_bytes=" << totals.size.json_bytes
        << " last_sync=" << rfc3339(totals.last_sync) << "\n";
  }
  return kExitOk;
}

}  // namespace

int run_cache_command(const std::vector<std::string>& args, const std::string& cache_dir,
                      std::ostream& out, std::ostream& err) {
  if (args.empty()) return usage(err);
  const std::string& command = args[0];
  if (command == "help" || command == "-h" || command == "--help") {
    out << kUsage;
    return kExitOk;
  }
  if (command == "ls") return run_ls(args, cache_dir, out, err);
  if (command == "get") return run_get(args, cache_dir, out, err);
  if (command == "stats") return run_stats(args, cache_dir, out, err);
  err << "yurthub cache: unknown command \"" << command << "\"\n";
  return usage(err);
}

int run_journal_command(const std::vector<std::string>& args, const std::string& cache_dir,
                        std::ostream& out, std::ostream& err) {
  if (args.size() != 1 || args[0] != "ls") {
    err << "usage: yurthub journal ls   (reads the journal in --disk-cache-path, read-only)\n\n"
           "One line per offline write waiting to be replayed, oldest first:\n"
           "  SEQ CREATED METHOD TARGET COMPONENT base-rv=RV bytes=N credentials=hub|client\n"
           "then a total. Exit status: 0 ok, 1 error (no cache), 2 bad usage.\n";
    return args.size() == 1 && (args[0] == "help" || args[0] == "--help") ? kExitOk : kExitUsage;
  }
  auto store = open_store(cache_dir, err);
  if (!store) return kExitFailure;
  std::size_t entries = 0, bytes = 0, unreadable = 0;
  store->read()->scan_journal([&](std::uint64_t seq, std::string_view encoded) {
    ++entries;
    bytes += encoded.size();
    auto entry = decode_journal_entry(seq, encoded);
    if (!entry) {
      ++unreadable;
      out << seq << " (unreadable; the hub drops it at its next replay)\n";
      return true;
    }
    out << seq << " " << rfc3339(entry->created_unix) << " " << entry->method << " "
        << entry->target << " " << entry->component << " base-rv=" << entry->base_resource_version
        << " bytes=" << entry->body.size()
        << " credentials=" << (entry->authorization.empty() ? "hub" : "client") << "\n";
    return true;
  });
  out << entries << " entries, " << bytes << " bytes";
  if (unreadable) out << ", " << unreadable << " unreadable";
  out << "\n";
  return kExitOk;
}

}  // namespace yurthub::cache
