// yurthub: the node's proxy to the cloud apiserver. Thin main: flags -> options -> the hub's
// parts assembled, started and run (cmd/node_hub.h). A bad flag or unreadable credential is one
// line on stderr and exit status 2; a listener that cannot bind is exit status 1.
//
//   yurthub --server-addr=... --node-name=...       run the hub
//   yurthub cache ls|get|stats [--disk-cache-path=DIR]   inspect the node's cache (read-only)
//   yurthub journal ls [--disk-cache-path=DIR]           offline writes waiting for replay
#include <algorithm>
#include <iostream>
#include <optional>
#include <string_view>

#include "base/log.h"
#include "base/malloc_policy.h"
#include "cache/inspect.h"
#include "cmd/node_hub.h"
#include "hub/options.h"
#include "hub/version.h"

namespace {

int fail(const std::string& message, int code) {
  std::cerr << "yurthub: " << message << "\n";
  return code;
}

// `yurthub cache|journal ...`: the cache directory comes from --disk-cache-path, as for the hub.
int cache_command(int argc, char** argv) {
  std::vector<std::string> args;
  std::string dir = yurthub::hub::HubOptions{}.disk_cache_path;
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--disk-cache-path=", 0) == 0)
      dir = std::string(arg.substr(18));
    else if (arg == "--disk-cache-path" && i + 1 < argc)
      dir = argv[++i];
    else
      args.emplace_back(arg);
  }
  if (std::string_view(argv[1]) == "journal") {
    return yurthub::cache::run_journal_command(args, dir, std::cout, std::cerr);
  }
  return yurthub::cache::run_cache_command(args, dir, std::cout, std::cerr);
}

// What needs no hub: the cache and journal subcommands, a bad flag, --help and --version. Returns
// the exit status when it answered; otherwise `options` holds the flags, and logging is set.
std::optional<int> answer_without_hub(int argc, char** argv,
                                      std::optional<yurthub::hub::HubOptions>& options) {
  using namespace yurthub;
  if (argc >= 2 &&
      (std::string_view(argv[1]) == "cache" || std::string_view(argv[1]) == "journal")) {
    return cache_command(argc, argv);
  }
  auto parsed = hub::parse_flags(argc, argv);
  if (!parsed) return fail(parsed.error().message, 2);
  if (parsed->show_help) {
    std::cout << hub::usage();
    return 0;
  }
  if (parsed->show_version) {
    std::cout << "yurthub " << hub::kVersion << "\n";
    return 0;
  }
  log::set_min_level(parsed->verbosity >= 4 ? log::Level::Debug : log::Level::Info);
  for (const auto& flag : parsed->ignored_flags) {
    YH_LOG(Warning) << "flag " << flag << " is accepted for compatibility with YurtHub and ignored";
  }
  options = std::move(*parsed);
  return std::nullopt;
}

}  // namespace

static int run_hub(int argc, char** argv) {
  using namespace yurthub;
  std::optional<hub::HubOptions> options;
  if (auto answered = answer_without_hub(argc, argv, options)) return *answered;
  auto node = cmd::NodeHub::assemble(std::move(*options));
  if (!node) return fail(node.error().message, 2);
  if (auto started = (*node)->start(); !started) return fail(started.error().message, 1);
  return (*node)->run();
}

int main(int argc, char** argv) {
  // Every failure the hub expects is a Result; an exception reaching here is a bug. It is
  // reported and the process exits (systemd restarts it) rather than aborting without a word.
  try {
    (void)yurthub::base::keep_freed_memory_for_reuse();  // before any thread allocates
    return run_hub(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "yurthub: stopped by an exception (a bug): " << e.what() << "\n";
  } catch (...) {
    std::cerr << "yurthub: stopped by an exception (a bug) of unknown type\n";
  }
  return 1;
}
