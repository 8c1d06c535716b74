// In-process controllers; see controllers.h.
#include "test/fake_apiserver/controllers.h"

#include <ctime>

#include "base/base64.h"
#include "base/log.h"
#include "test/fake_apiserver/cluster_info.h"
#include "test/fake_apiserver/csr_request.h"
#include "test/fake_apiserver/csr_validation.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

std::string rfc3339(SystemTime t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool has_certificate(const rapidjson::Value& csr) {
  auto status = csr.FindMember("status");
  if (status == csr.MemberEnd() || !status->value.IsObject()) return false;
  auto cert = status->value.FindMember("certificate");
  return cert != status->value.MemberEnd() && cert->value.IsString() &&
         cert->value.GetStringLength() > 0;
}

}  // namespace

Controllers::Controllers(Store& store, ControllerOptions options, Now now)
    : store_(store), options_(std::move(options)), now_(std::move(now)) {
  store_.set_observer([this](const Event& e) { on_event(e); });
}

void Controllers::on_event(const Event& e) {
  pending_.push_back(e);
  if (draining_) return;
  draining_ = true;
  while (!pending_.empty()) {
    Event next = std::move(pending_.front());
    pending_.pop_front();
    handle(next);
  }
  draining_ = false;
}

void Controllers::handle(const Event& e) {
  if (e.resource == kCsrResourceKey) {
    if (e.type != EventType::Deleted) reconcile_csr(e.name, e.type == EventType::Added);
  } else if ((e.resource == "/secrets" && e.ns == "kube-system") ||
             (e.resource == "/configmaps" && e.ns == "kube-public" && e.name == "cluster-info" &&
              e.type != EventType::Deleted)) {
    sign_cluster_info(store_, now_());
  }
}

void Controllers::reconcile_csr(const std::string& name, bool created) {
  const StoredObject* obj = store_.get(std::string(kCsrResourceKey), "", name);
  if (obj == nullptr) return;
  auto csr = parse_json(*obj->json);
  if (!csr || !csr->IsObject()) return;
  const std::string now = rfc3339(now_());
  const bool approved = has_csr_condition(*csr, "Approved");
  const bool denied = has_csr_condition(*csr, "Denied");
  if (!approved && !denied) {
    if (!created || !options_.csr_auto_approve) return;
    add_csr_condition(*csr, "Approved", "AutoApproved",
                      "Auto approving CSR: fake-apiserver --csr-auto-approve", now);
    store_.put(std::string(kCsrResourceKey), "", name, *csr);
    return;
  }
  // certificate_controller: ignore unapproved, denied (never signed) and failed requests.
  if (denied || has_csr_condition(*csr, "Failed") || has_certificate(*csr) ||
      options_.signer == nullptr) {
    return;
  }
  auto pem = csr_request_pem(*csr);
  auto parsed = pem ? parse_csr(*pem) : Result<ParsedCsr>(pem.error());
  if (!parsed) {
    YH_LOG(Warning) << "csr " << name << ": unable to parse csr: " << parsed.error().message;
    return;
  }
  const std::vector<std::string> usages = csr_usages(*csr);
  std::string why;
  switch (check_signer_policy(csr_spec_string(*csr, "signerName"), *parsed, usages, why)) {
    case SignerVerdict::Unknown:  // another signer's CSR: left approved and unsigned
      return;
    case SignerVerdict::Refused:
      add_csr_condition(*csr, "Failed", "SignerValidationFailure", why, now);
      store_.put(std::string(kCsrResourceKey), "", name, *csr);
      return;
    case SignerVerdict::Accepted:
      break;
  }
  std::optional<std::int64_t> expiration;
  auto spec = csr->FindMember("spec");
  if (spec != csr->MemberEnd() && spec->value.IsObject() &&
      spec->value.HasMember("expirationSeconds") && spec->value["expirationSeconds"].IsInt64()) {
    expiration = spec->value["expirationSeconds"].GetInt64();
  }
  auto cert = options_.signer->sign(*parsed, usages, expiration, now_());
  if (!cert) {
    YH_LOG(Warning) << "csr " << name << ": error auto signing csr: " << cert.error().message;
    return;
  }
  auto& a = csr->GetAllocator();
  if (!csr->HasMember("status") || !(*csr)["status"].IsObject()) {
    csr->RemoveMember("status");
    csr->AddMember("status", rapidjson::Value(rapidjson::kObjectType), a);
  }
  std::string encoded = base::encode_base64(*cert);
  (*csr)["status"].RemoveMember("certificate");
  (*csr)["status"].AddMember("certificate", rapidjson::Value(encoded.c_str(), a), a);
  store_.put(std::string(kCsrResourceKey), "", name, *csr);
  YH_LOG(Info) << "csr " << name << ": issued a certificate";
}

}  // namespace yurthub::fake
