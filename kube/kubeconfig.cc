// Kubeconfig loading (see kubeconfig.h): YAML (or JSON, which is YAML) via yaml-cpp, base64 of
// the *-data fields via base/base64.h, PEM blocks picked by type so one combined cert+key file
// (YurtHub's pki/yurthub-current.pem) serves both client-certificate and client-key. Called once at
// startup through net/files.h; yaml-cpp's exceptions are caught here and never escape.
#include "kube/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string_view>
#include <vector>

#include "base/base64.h"

namespace yurthub::kube {
namespace {

namespace fs = std::filesystem;

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The files a kubeconfig names: kubectl resolves relative paths against the kubeconfig's own
// directory. Without a reader (a kubeconfig from the network) no file is read.
struct Files {
  fs::path dir;
  const FileReader* read = nullptr;
  Result<std::string> contents(const std::string& file) const {
    if (read == nullptr) return make_error("names a file where only data is read");
    return (*read)(file.empty() || fs::path(file).is_absolute() ? file : (dir / file).string());
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Standard padded base64, as Go's encoding/json decodes []byte (line breaks ignored).
Result<std::string> decode_base64(std::string_view text) {
  std::string in;
  for (char c : text) {
    if (!is_space(c)) in.push_back(c);
  }
  return base::decode_base64(in);
}

// The PEM blocks of `text` that are certificates (all of them, in order: a chain) or, with
// `want_key`, the first private key. Other blocks and text between them are dropped.
std::string pem_blocks(std::string_view text, bool want_key) {
  constexpr std::string_view kBegin = "-----BEGIN ", kDashes = "-----";
  std::string out;
  for (std::size_t pos = text.find(kBegin); pos != std::string_view::npos;
       pos = text.find(kBegin, pos)) {
    const std::size_t label_at = pos + kBegin.size();
    const std::size_t label_end = text.find(kDashes, label_at);
    if (label_end == std::string_view::npos) break;
    const std::string_view label = text.substr(label_at, label_end - label_at);
    const std::string end_line = "-----END " + std::string(label) + "-----";
    const std::size_t end = text.find(end_line, label_end);
    if (end == std::string_view::npos) break;
    const bool is_key = label.ends_with("PRIVATE KEY");
    if (want_key ? is_key : label == "CERTIFICATE") {
      out.append(text.substr(pos, end + end_line.size() - pos)).push_back('\n');
      if (want_key) break;
    }
    pos = end + end_line.size();
  }
  return out;
}

// Where we are in the document, for messages: `cluster "edge"`.
struct Where {
  const char* kind;
  std::string name;
  std::string field(std::string_view key) const {
    return std::string(kind) + " " + quote(name) + ": " + std::string(key);
  }
};

// A mapping; absent or null reads as an empty mapping.
Result<YAML::Node> as_map(const YAML::Node& node, const std::string& what) {
  if (!node.IsDefined() || node.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!node.IsMap()) return make_error(what + " is not a mapping");
  return node;
}

// A string field; absent or null reads as "".
Result<std::string> text_field(const YAML::Node& map, const std::string& key,
                               const std::string& what) {
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return std::string();
  if (!v.IsScalar()) return make_error(what + " is not a string");
  return v.Scalar();
}

Result<bool> bool_field(const YAML::Node& map, const std::string& key, const std::string& what) {
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return false;
  bool b = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) {
    return make_error(what + " is not a boolean");
  }
  return b;
}

// The `item` mapping of the entry named `name` in the top-level list `list`
// (clusters/cluster, users/user, contexts/context).
Result<YAML::Node> find_named(const YAML::Node& root, const char* list, const char* item,
                              const std::string& name) {
  // yaml-cpp: an absent key yields an invalid node whose type queries throw; test IsDefined first.
  const YAML::Node entries = root[list];
  const bool present = entries.IsDefined() && !entries.IsNull();
  if (present && !entries.IsSequence()) return make_error(std::string(list) + " is not a list");
  if (present) {
    for (const YAML::Node& entry : entries) {
      auto map = as_map(entry, std::string(list) + " entry");
      if (!map) return map.error();
      auto entry_name = text_field(*map, "name", std::string(list) + " entry name");
      if (!entry_name) return entry_name.error();
      if (*entry_name == name) return as_map((*map)[item], std::string(item) + " " + quote(name));
    }
  }
  return make_error(std::string(item) + " " + quote(name) + " not found in " + list);
}

// `<key>-data` (base64) or `<key>` (a file path). With both, the data wins, as in client-go's
// TLS setup (kubectl's validation warns "...-data will override"); we do not fail on it.
Result<std::string> data_or_file(const YAML::Node& map, const std::string& key, const Where& at,
                                 const Files& files) {
  auto data = text_field(map, key + "-data", at.field(key + "-data"));
  if (!data) return data.error();
  if (!data->empty()) {
    auto decoded = decode_base64(*data);
    if (!decoded) return make_error(at.field(key + "-data") + ": " + decoded.error().message);
    return decoded;
  }
  auto file = text_field(map, key, at.field(key));
  if (!file || file->empty()) return file;
  auto contents = files.contents(*file);
  if (!contents) return make_error(at.field(key) + ": " + contents.error().message);
  return contents;
}

// Keeps only the PEM blocks of the wanted type; an error when there are none.
Result<std::string> pem_field(std::string_view raw, bool want_key, const std::string& what) {
  std::string blocks = pem_blocks(raw, want_key);
  if (blocks.empty()) {
    return make_error(what + ": no PEM " + (want_key ? "PRIVATE KEY" : "CERTIFICATE") + " block");
  }
  return blocks;
}

Status load_cluster(const YAML::Node& cluster, const Where& at, const Files& files,
                    Credentials& out) {
  auto server = text_field(cluster, "server", at.field("server"));
  if (!server) return server.error();
  auto server_name = text_field(cluster, "tls-server-name", at.field("tls-server-name"));
  if (!server_name) return server_name.error();
  auto insecure =
      bool_field(cluster, "insecure-skip-tls-verify", at.field("insecure-skip-tls-verify"));
  if (!insecure) return insecure.error();
  auto ca = data_or_file(cluster, "certificate-authority", at, files);
  if (!ca) return ca.error();
  out.server = std::move(*server);
  out.tls_server_name = std::move(*server_name);
  out.insecure_skip_tls_verify = *insecure;
  if (ca->empty()) {
    if (*insecure) return {};
    return make_error(at.field("certificate-authority") +
                      ": no certificate-authority(-data) and insecure-skip-tls-verify is not set");
  }
  auto pem = pem_field(*ca, false, at.field("certificate-authority"));
  if (!pem) return pem.error();
  out.ca_pem = std::move(*pem);
  return {};
}

Status load_token(const YAML::Node& user, const Where& at, const Files& files, Credentials& out) {
  auto token = text_field(user, "token", at.field("token"));
  if (!token) return token.error();
  out.token = std::string(trim(*token));
  auto token_file = text_field(user, "tokenFile", at.field("tokenFile"));
  if (!token_file) return token_file.error();
  if (token_file->empty()) return {};
  // client-go re-reads tokenFile and prefers it over `token`; it trims surrounding whitespace.
  auto contents = files.contents(*token_file);
  if (!contents) return make_error(at.field("tokenFile") + ": " + contents.error().message);
  if (trim(*contents).empty()) return make_error(at.field("tokenFile") + ": file is empty");
  out.token = std::string(trim(*contents));
  return {};
}

Status load_user(const YAML::Node& user, const Where& at, const Files& files, Credentials& out) {
  auto cert = data_or_file(user, "client-certificate", at, files);
  if (!cert) return cert.error();
  auto key = data_or_file(user, "client-key", at, files);
  if (!key) return key.error();
  if (!cert->empty() && key->empty()) {
    return make_error(at.field("client-certificate") + " is set but client-key(-data) is not");
  }
  if (cert->empty() && !key->empty()) {
    return make_error(at.field("client-key") + " is set but client-certificate(-data) is not");
  }
  if (!cert->empty()) {
    auto cert_pem = pem_field(*cert, false, at.field("client-certificate"));
    if (!cert_pem) return cert_pem.error();
    auto key_pem = pem_field(*key, true, at.field("client-key"));
    if (!key_pem) return key_pem.error();
    out.client_cert_pem = std::move(*cert_pem);
    out.client_key_pem = std::move(*key_pem);
  }
  if (Status s = load_token(user, at, files, out); !s) return s;
  if (out.has_client_certificate() || !out.token.empty()) return {};
  std::string unsupported;
  for (const char* key : {"exec", "auth-provider", "username"}) {
    if (user[key].IsDefined()) unsupported += std::string(unsupported.empty() ? "" : ", ") + key;
  }
  return make_error(std::string(at.kind) + " " + quote(at.name) +
                    ": neither a client certificate (client-certificate + client-key) nor a token" +
                    (unsupported.empty() ? "" : " (" + unsupported + " is not supported)"));
}

Result<Credentials> parse(const YAML::Node& doc, const Files& files) {
  auto root = as_map(doc, "the document");
  if (!root) return root.error();
  auto current = text_field(*root, "current-context", "current-context");
  if (!current) return current.error();
  if (current->empty()) return make_error("current-context is not set");
  auto context = find_named(*root, "contexts", "context", *current);
  if (!context) return make_error("current-context: " + context.error().message);
  const Where ctx{"context", *current};
  auto cluster_name = text_field(*context, "cluster", ctx.field("cluster"));
  if (!cluster_name) return cluster_name.error();
  if (cluster_name->empty()) return make_error(ctx.field("cluster") + " is not set");
  auto user_name = text_field(*context, "user", ctx.field("user"));
  if (!user_name) return user_name.error();

  Credentials out;
  auto cluster = find_named(*root, "clusters", "cluster", *cluster_name);
  if (!cluster) return make_error(ctx.field("cluster") + ": " + cluster.error().message);
  if (Status s = load_cluster(*cluster, Where{"cluster", *cluster_name}, files, out); !s) {
    return s.error();
  }
  // A context without a user is anonymous, which leaves the hub without an identity.
  if (user_name->empty()) {
    return make_error(ctx.field("user") + " is not set (the hub needs a certificate or a token)");
  }
  auto user = find_named(*root, "users", "user", *user_name);
  if (!user) return make_error(ctx.field("user") + ": " + user.error().message);
  if (Status s = load_user(*user, Where{"user", *user_name}, files, out); !s) return s.error();
  return out;
}

// A YAML double-quoted scalar.
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

Result<Credentials> parse_cluster_kubeconfig(const std::string& text) {
  try {
    const YAML::Node doc = YAML::Load(text);
    auto root = as_map(doc, "the document");
    if (!root) return root.error();
    const YAML::Node clusters = (*root)["clusters"];
    if (!clusters.IsDefined() || !clusters.IsSequence() || clusters.size() == 0) {
      return make_error(ErrorCode::InvalidArgument, "the kubeconfig has no cluster");
    }
    auto entry = as_map(clusters[0], "clusters entry");
    if (!entry) return entry.error();
    auto cluster = as_map((*entry)["cluster"], "cluster");
    if (!cluster) return cluster.error();
    // Only -data fields: a kubeconfig from the network never names a local file to read.
    if ((*cluster)["certificate-authority"].IsDefined()) {
      return make_error(ErrorCode::InvalidArgument, "the kubeconfig names a CA file, not CA data");
    }
    Credentials out;
    if (Status s = load_cluster(*cluster, Where{"cluster", ""}, Files{}, out); !s) {
      return s.error();
    }
    return out;
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::InvalidArgument, std::string("invalid YAML: ") + e.what());
  }
}

std::string write_kubeconfig(const KubeconfigFile& file) {
  std::string out =
      "apiVersion: v1\nkind: Config\nclusters:\n- name: default-cluster\n  cluster:\n";
  out += "    server: " + yaml_quoted(file.server) + "\n";
  if (!file.ca_file.empty())
    out += "    certificate-authority: " + yaml_quoted(file.ca_file) + "\n";
  out += "users:\n- name: " + yaml_quoted(file.user) + "\n  user:\n";
  if (!file.client_file.empty()) {
    out += "    client-certificate: " + yaml_quoted(file.client_file) + "\n";
    out += "    client-key: " + yaml_quoted(file.client_file) + "\n";
  }
  if (!file.token.empty()) out += "    token: " + yaml_quoted(file.token) + "\n";
  out += "contexts:\n- name: default-context\n  context:\n    cluster: default-cluster\n";
  out += "    user: " + yaml_quoted(file.user) + "\n";
  out += "current-context: default-context\n";
  return out;
}

Result<Credentials> parse_kubeconfig(std::string_view text, const std::string& path,
                                     const FileReader& read) {
  const std::string prefix = "kubeconfig " + path + ": ";
  try {
    const YAML::Node doc = YAML::Load(std::string(text));
    auto credentials = parse(doc, Files{fs::path(path).parent_path(), &read});
    if (!credentials) return make_error(prefix + credentials.error().message);
    return credentials;
  } catch (const YAML::Exception& e) {
    return make_error(prefix + "invalid YAML: " + e.what());
  } catch (const std::exception& e) {
    return make_error(prefix + e.what());
  }
}

}  // namespace yurthub::kube
