// lib/distributed internal: the c10d objects behind a Group (only lib/distributed's sources include
// this). group.cpp makes and uses them; peer_health.cpp runs the heartbeat and explains failures.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "distributed/group.h"

namespace trainer::distributed {

// Each rank's heartbeat in the store ("heartbeat/R" = "<beat> <collectives entered>"), written by
// a detached thread (so a stopped store host never blocks the group's destruction) through the
// group's store client, which no wait of ours holds for long (the solo wait polls); shared by the
// group and that thread.
struct Heartbeat {
  c10::intrusive_ptr<c10d::Store> store;
  std::chrono::milliseconds interval{1000};
  std::atomic<int64_t> collectives{0};  // entered by this rank (guarded calls)
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
};

struct Group::Impl {
  int rank = 0;
  int size = 1;
  Backend backend = Backend::kGloo;
  Timeouts timeouts;
  c10::Device device{c10::kCPU};  // where collective buffers live (CUDA for NCCL)
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  std::shared_ptr<Heartbeat> heartbeat = std::make_shared<Heartbeat>();
  int attempt = 0;                      // TORCHELASTIC_RESTART_COUNT
  std::shared_ptr<JobRecords> records;  // keys that outlive an attempt
  int64_t solo_waits = 0;
  ~Impl();
};

struct JobRecords::Impl {
  c10::intrusive_ptr<c10d::Store> store;  // prefixed with the job's name
  int attempt = 0;
};

// torchrun's variables: workers are clients of the agent's store (TORCHELASTIC_USE_AGENT_STORE),
// this start's number (TORCHELASTIC_RESTART_COUNT), the job's name (TORCHELASTIC_RUN_ID, "local"
// without the agent).
bool agent_store();
int restart_count();
std::string job_name();

// The records of `job` in `store` (the agent's, or an in-process test store).
std::shared_ptr<JobRecords> job_records_in(const c10::intrusive_ptr<c10d::Store>& store,
                                           const std::string& job, int attempt);

// The store key of `rank`'s heartbeat.
std::string heartbeat_key(int rank);

// Beats every `interval` until stopped, on a detached thread; a store that fails ends the beating
// quietly (the rank's own collectives report the failure). Stopped by Group::Impl's destructor.
void start_heartbeat(std::shared_ptr<Heartbeat> heartbeat, int rank);

// What the peers' heartbeats say after a failed wait: which ranks stopped beating (killed,
// stopped or frozen), which are behind this rank in collectives, or that the store itself does not
// answer. Takes about 2.5 heartbeat intervals.
std::string peer_report(Group::Impl& impl);

// The CommError of a failed `what`: this rank, the wait that ran out (by the cause's words) with
// its key and seconds, the peers' report, and c10d's own words.
CommError comm_error(Group::Impl& impl, const char* what, const std::string& cause);

// Runs `what` and turns a c10d failure into CommError naming this rank and the usual causes.
template <class F>
auto guarded(Group::Impl& impl, const char* what, F&& f) -> decltype(f()) {
  ++impl.heartbeat->collectives;
  try {
    return f();
  } catch (const CommError&) {
    throw;
  } catch (const c10::Error& e) {  // without the C++ backtrace c10 appends
    throw comm_error(impl, what, e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw comm_error(impl, what, e.what());
  }
}

}  // namespace trainer::distributed
