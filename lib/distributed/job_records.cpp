// Tested by tests/distributed/test_group.cpp: job records set/get outlive an attempt, missing key
//   is nullopt, attempt number (in-process store; agent-store connect untested).
// See job_records.h. The keys sit in torchrun's agent store (or a test's in-process store) under
// trainer/job/<job>/, beside the attempts' /worker/attempt_K/ prefixes.
#include "distributed/job_records.h"

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>

#include "distributed/group_impl.h"

namespace trainer::distributed {

bool agent_store() {
  const char* v = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  return v != nullptr && std::string(v) == "True";
}

int restart_count() {
  const char* v = std::getenv("TORCHELASTIC_RESTART_COUNT");
  return v == nullptr ? 0 : std::atoi(v);
}

std::string job_name() {
  const char* id = std::getenv("TORCHELASTIC_RUN_ID");
  return agent_store() && id != nullptr && *id != '\0' ? id : "local";
}

std::shared_ptr<JobRecords> job_records_in(const c10::intrusive_ptr<c10d::Store>& store,
                                           const std::string& job, int attempt) {
  auto impl = std::make_unique<JobRecords::Impl>();
  impl->store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("trainer/job/{}/", job), store);
  impl->attempt = attempt;
  return std::make_shared<JobRecords>(std::move(impl));
}

JobRecords::JobRecords(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobRecords::~JobRecords() = default;

std::shared_ptr<JobRecords> JobRecords::connect(const core::DistEnv& env,
                                                std::chrono::milliseconds timeout) {
  if (!agent_store() || env.master_addr.empty() || env.master_port <= 0) return nullptr;
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = false;
  so.timeout = timeout;
  try {
    return job_records_in(c10::make_intrusive<c10d::TCPStore>(env.master_addr, so), job_name(),
                          restart_count());
  } catch (const std::exception& e) {
    throw CommError(fmt::format("rank {}: torchrun's agent store at {}:{} did not answer: {}",
                                env.rank, env.master_addr, env.master_port, e.what()));
  }
}

int JobRecords::attempt() const {
  return impl_->attempt;
}

std::optional<std::string> JobRecords::get(const std::string& key) {
  try {
    if (!impl_->store->check({key})) return std::nullopt;
    const std::vector<uint8_t> bytes = impl_->store->get(key);
    return std::string(bytes.begin(), bytes.end());
  } catch (const std::exception& e) {
    throw CommError(fmt::format("reading the job's record '{}' from the agent's store failed: {}",
                                key, e.what()));
  }
}

void JobRecords::set(const std::string& key, const std::string& value) {
  try {
    impl_->store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    throw CommError(fmt::format("writing the job's record '{}' to the agent's store failed: {}",
                                key, e.what()));
  }
}

}  // namespace trainer::distributed
