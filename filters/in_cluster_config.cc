// inclusterconfig filter; see in_cluster_config.h. Called by the FilterChain
// (filters/registry.cc) for each ConfigMap of a handled get, list or watch; stateless.
#include "filters/in_cluster_config.h"

#include <optional>
#include <string>

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

constexpr std::string_view kKubeconfig = "kubeconfig";

// YurtHub's test: the line trimmed of spaces, split on ':', has exactly two parts and the first
// is `kubeconfig` (so `kubeconfig: C:\x` or a `kubeconfig` inside a value is left alone).
bool is_kubeconfig_line(std::string_view line) {
  auto first = line.find_first_not_of(' ');
  if (first == std::string_view::npos) return false;
  line = line.substr(first, line.find_last_not_of(' ') - first + 1);
  auto colon = line.find(':');
  return colon != std::string_view::npos && line.find(':', colon + 1) == std::string_view::npos &&
         line.substr(0, colon) == kKubeconfig;
}

// The text with every kubeconfig line commented out; nullopt when no line matched.
std::optional<std::string> comment_out_kubeconfig(std::string_view text) {
  std::string result;
  result.reserve(text.size() + 8);
  bool changed = false;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    if (is_kubeconfig_line(line)) {
      std::size_t at = line.find(kKubeconfig);
      result.append(line.substr(0, at)).append("#").append(line.substr(at));
      changed = true;
    } else {
      result.append(line);
    }
    if (end == std::string_view::npos) break;
    result.push_back('\n');
    start = end + 1;
  }
  if (!changed) return std::nullopt;
  return result;
}

class InClusterConfigFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "inclusterconfig"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "", {"v1"}, "configmaps",
                           {kube::Verb::Get, kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView&) const override { return true; }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                const ClusterView&) const override {
    if (metadata_string(object, "namespace") != "kube-system" ||
        metadata_string(object, "name") != "kube-proxy") {
      return Verdict::Keep;
    }
    rapidjson::Value* data = find_member(object, "data");
    rapidjson::Value* config = data ? find_member(*data, "config.conf") : nullptr;
    if (config == nullptr || !config->IsString()) return Verdict::Keep;
    auto updated =
        comment_out_kubeconfig(std::string_view(config->GetString(), config->GetStringLength()));
    if (!updated) return Verdict::Keep;
    config->SetString(updated->data(), static_cast<rapidjson::SizeType>(updated->size()),
                      allocator);
    return Verdict::Modified;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_in_cluster_config_filter() {
  return std::make_unique<InClusterConfigFilter>();
}

}  // namespace yurthub::filters
