// A group of training processes (ranks) that talk through PyTorch's c10d: a TCPStore rendezvous
// (torchrun's environment), then ProcessGroupGloo on the CPU or ProcessGroupNCCL on CUDA devices.
//
// Why a wrapper: the fit loop needs a handful of agreed decisions (barrier, broadcast, "does any
// rank want to stop") and must never see c10d's headers (they pull in gloo and NCCL); the
// wrapper also turns c10d's low-level failures into errors that say which rank and what to check.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dist_env.h"
#include "distributed/job_records.h"

namespace trainer::distributed {

enum class Backend { kGloo, kNccl };

// "gloo" / "nccl"; "" picks nccl for CUDA devices and gloo otherwise. Throws core::ConfigError
// for other names and for nccl on a build or device without it.
Backend choose_backend(const std::string& name, bool cuda_device);
const char* backend_name(Backend backend);
bool nccl_available();  // built with c10d's NCCL backend

// Where a rank's collective buffers live: the CPU for Gloo, the rank's own training device for
// NCCL (device=2,3 puts rank 0's on cuda:2, not cuda:LOCAL_RANK). Throws core::ConfigError for
// NCCL without a CUDA device with an index.
c10::Device collective_device(Backend backend, const c10::Device& training_device);

// How long each kind of wait may take before a rank fails, naming the wait (config keys
// dist_join_timeout, dist_solo_timeout, dist_timeout).
struct Timeouts {
  std::chrono::milliseconds join{std::chrono::minutes(15)};    // the ranks meeting
  std::chrono::milliseconds solo{std::chrono::minutes(60)};    // a peer's solo work (caches)
  std::chrono::milliseconds steady{std::chrono::minutes(10)};  // every collective after joining
};

struct GroupOptions {
  core::DistEnv env;
  Backend backend = Backend::kGloo;
  c10::Device device{c10::kCPU};  // this rank's training device (collective_device)
  Timeouts timeouts;
};

// A failed collective: a rank died, hung past the timeout, or the network broke. The message
// names this rank, the wait that ran out, and which peers stopped sending heartbeats or are behind
// (each rank publishes a heartbeat and its count of collectives in the rendezvous store).
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Group {
 public:
  // Joins the group described by `options.env` (MASTER_ADDR:MASTER_PORT); blocks until every rank
  // has joined or the join timeout passes. Throws core::ConfigError for a port in use or a missing
  // rank, with what to check.
  static std::shared_ptr<Group> join(const GroupOptions& options);
  // In-process groups for tests: `size` threads each call this with the same `name` and their
  // rank; they share an in-memory store and talk through Gloo on loopback. The first form uses
  // `timeout` for every kind of wait.
  static std::shared_ptr<Group> join_in_process(const std::string& name, int rank, int size,
                                                std::chrono::milliseconds timeout);
  // `attempt` stands for torchrun's restart count: a later attempt under the same `name` gets
  // fresh collectives and the job records the earlier ones left.
  static std::shared_ptr<Group> join_in_process(const std::string& name, int rank, int size,
                                                const Timeouts& timeouts, int attempt = 0);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const;
  int size() const;
  Backend backend() const;
  // This start of the workers under torchrun's elastic agent (TORCHELASTIC_RESTART_COUNT; 0: the
  // first, and always 0 outside torchrun).
  int attempt() const;

  // The job's records (job_records.h), in the group's store.
  const std::shared_ptr<JobRecords>& records() const;

  void barrier();
  // Waits (up to the solo timeout) until every rank has called this: the wait for local rank 0's
  // solo work (run_local_rank_zero_first). Through the rendezvous store, so the collectives'
  // steady-state timeout does not apply. Throws CommError naming the ranks that did not arrive.
  void wait_for_solo_work();
  // In place: every rank ends with rank `root`'s values (coalesced into few messages).
  void broadcast(const std::vector<at::Tensor>& tensors, int root = 0);
  // True on every rank when `flag` is true on any rank.
  bool any(bool flag);
  // Every rank gets rank `root`'s value.
  int64_t broadcast_value(int64_t value, int root = 0);
  double broadcast_value(double value, int root = 0);
  std::string broadcast_text(const std::string& text, int root = 0);
  // Every rank's `text`, by rank, on every rank (one broadcast per rank: for results of a few
  // megabytes, such as a sharded validation's statistics and detections, not for tensors).
  std::vector<std::string> all_gather_text(const std::string& text);
  // Elementwise sum over ranks, in place.
  void all_reduce_sum(at::Tensor& tensor);

  struct Impl;
  Impl& impl() { return *impl_; }  // lib/distributed internals (the gradient reducer)

 private:
  explicit Group(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Runs `work` on the local rank 0 (`first`) before the other ranks of `group` (null: just runs
// it), the reference's torch_distributed_zero_first: for files the first one writes and the others
// then read (label caches, disk image caches). Every rank passes one barrier, the first one even
// when its work throws; the exception is rethrown after it.
void run_local_rank_zero_first(Group* group, bool first, const std::function<void()>& work);

}  // namespace trainer::distributed
