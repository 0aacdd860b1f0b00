// See group.h. Rendezvous as torch.distributed's env:// does it: under torchrun's agent store
// (TORCHELASTIC_USE_AGENT_STORE=True) every rank is a client of the agent's TCPStore; otherwise
// rank 0 hosts it. Gloo picks its network interface as PyTorch does (GLOO_SOCKET_IFNAME, else the
// host name's address, else loopback).
#include "distributed/group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.h"
#include "distributed/group_impl.h"
#include "distributed/local_launcher.h"

#ifdef TRAINER_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace trainer::distributed {
namespace {

constexpr size_t kBroadcastBucketBytes = 250u << 20;  // DDP's module-state broadcast bucket
// How often the solo wait looks for the other ranks' arrival keys.
constexpr auto kSoloPoll = std::chrono::milliseconds(100);

// The listening socket trainer's own launcher handed to rank 0 (distributed/local_launcher.h), when
// it is a listening socket on MASTER_PORT; the variable is removed so no child inherits it.
std::optional<int> inherited_store_socket(int port) {
  const char* v = std::getenv(kStoreListenFdVariable);
  if (v == nullptr) return std::nullopt;
  const int fd = std::atoi(v);
  ::unsetenv(kStoreListenFdVariable);
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  int listening = 0;
  socklen_t option_len = sizeof(listening);
  if (fd <= 2 || ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &option_len) != 0 ||
      !listening || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      addr.sin_family != AF_INET || ntohs(addr.sin_port) != port) {
    return std::nullopt;
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

c10::intrusive_ptr<c10d::Store> connect_store(const GroupOptions& o) {
  const auto& env = o.env;
  if (env.master_addr.empty() || env.master_port <= 0 || env.master_port > 65535) {
    throw core::ConfigError(fmt::format(
        "WORLD_SIZE={} asks for {} ranks, but MASTER_ADDR/MASTER_PORT are not set ({}:{}): launch "
        "with torchrun, or with device=0,1,... (trainer starts the ranks itself)",
        env.world_size, env.world_size, env.master_addr.empty() ? "?" : env.master_addr,
        env.master_port));
  }
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = env.rank == 0 && !agent_store();
  so.numWorkers = static_cast<size_t>(env.world_size);
  so.waitWorkers = true;
  so.multiTenant = true;
  so.timeout = o.timeouts.join;
  if (so.isServer) so.masterListenFd = inherited_store_socket(env.master_port);
  const auto join_seconds = std::chrono::duration_cast<std::chrono::seconds>(so.timeout).count();
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (so.isServer && (what.find("in use") != std::string::npos ||
                        what.find("EADDRINUSE") != std::string::npos)) {
      throw core::ConfigError(
          fmt::format("MASTER_PORT={} on {} is in use by another program: pick a free port "
                      "(torchrun --master-port P, or leave it to trainer's own launcher)",
                      env.master_port, env.master_addr));
    }
    throw core::ConfigError(fmt::format(
        "rank {}: the {} ranks did not all meet at {}:{} within dist_join_timeout={} s (check "
        "WORLD_SIZE, --nnodes/--nproc-per-node, that every node was started and can reach "
        "MASTER_ADDR): {}",
        env.rank, env.world_size, env.master_addr, env.master_port, join_seconds, what));
  }
  return store;
}

// The ranks' own keys: torch's worker prefix under the agent's store (one per attempt), else ours.
c10::intrusive_ptr<c10d::Store> group_store(const c10::intrusive_ptr<c10d::Store>& store) {
  const std::string prefix =
      agent_store() ? fmt::format("/worker/attempt_{}/", restart_count()) : std::string("trainer/");
  return c10::make_intrusive<c10d::PrefixStore>(prefix, store);
}

// The group over `store` (c10d's timeout: the steady-state one), its heartbeat started.
std::unique_ptr<Group::Impl> make_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                        int size, Backend backend, const Timeouts& timeouts,
                                        const c10::Device& training_device) {
  const auto timeout = timeouts.steady;
  auto impl = std::make_unique<Group::Impl>();
  impl->rank = rank;
  impl->size = size;
  impl->backend = backend;
  impl->timeouts = timeouts;
  impl->store = store;
  impl->group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
  if (backend == Backend::kGloo) {
    auto options = c10d::ProcessGroupGloo::Options::create_default(timeout);
    auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
    impl->group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
    impl->group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, gloo);
    impl->group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  } else {
#ifdef TRAINER_WITH_NCCL
    impl->device = collective_device(backend, training_device);
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
    impl->group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, nccl);
    impl->group->setDefaultBackend(c10d::ProcessGroup::BackendType::NCCL);
#else
    (void)training_device;
    throw core::ConfigError("dist_backend: nccl is not in this build (a CPU build): use gloo");
#endif
  }
  impl->group->setGroupName(fmt::format("trainer_{}", backend_name(backend)));
  // A tenth of the steady-state timeout, 0.2 s to 2 s: a stopped peer is seen well within it, and
  // a failure report (two readings 2.5 intervals apart) adds at most 5 s.
  impl->heartbeat->interval = std::clamp<std::chrono::milliseconds>(
      timeouts.steady / 10, std::chrono::milliseconds(200), std::chrono::seconds(2));
  impl->heartbeat->store = store;
  if (size > 1) start_heartbeat(impl->heartbeat, rank);
  return impl;
}

}  // namespace

Backend choose_backend(const std::string& name, bool cuda_device) {
  if (name.empty()) return cuda_device && nccl_available() ? Backend::kNccl : Backend::kGloo;
  if (name == "gloo") return Backend::kGloo;
  if (name == "nccl") {
    if (!nccl_available()) {
      throw core::ConfigError("dist_backend: nccl is not in this build (a CPU build): use gloo");
    }
    if (!cuda_device) {
      throw core::ConfigError("dist_backend: nccl needs CUDA devices; the CPU uses gloo");
    }
    return Backend::kNccl;
  }
  throw core::ConfigError(fmt::format(
      "dist_backend: '{}' is not a backend (use nccl or gloo, or leave it empty)", name));
}

c10::Device collective_device(Backend backend, const c10::Device& training_device) {
  if (backend == Backend::kGloo) return c10::Device(c10::kCPU);
  if (!training_device.is_cuda() || !training_device.has_index()) {
    throw core::ConfigError(
        fmt::format("dist_backend: nccl runs on this rank's CUDA device, but its device is {}",
                    training_device.str()));
  }
  return training_device;
}

const char* backend_name(Backend backend) {
  return backend == Backend::kNccl ? "nccl" : "gloo";
}

bool nccl_available() {
#ifdef TRAINER_WITH_NCCL
  return true;
#else
  return false;
#endif
}

Group::Group(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Group::~Group() = default;

std::shared_ptr<Group> Group::join(const GroupOptions& options) {
  const auto store = connect_store(options);
  auto impl = make_group(group_store(store), options.env.rank, options.env.world_size,
                         options.backend, options.timeouts, options.device);
  impl->attempt = restart_count();
  impl->records = job_records_in(store, job_name(), impl->attempt);
  auto group = std::shared_ptr<Group>(new Group(std::move(impl)));
  group->barrier();  // everyone's backend is up before anyone trains
  return group;
}

std::shared_ptr<Group> Group::join_in_process(const std::string& name, int rank, int size,
                                              std::chrono::milliseconds timeout) {
  return join_in_process(name, rank, size, Timeouts{timeout, timeout, timeout});
}

std::shared_ptr<Group> Group::join_in_process(const std::string& name, int rank, int size,
                                              const Timeouts& timeouts, int attempt) {
  // c10d's flight recorder (a per-process log of collectives) is one object for every group, and
  // several groups in one process recording at once corrupt it: off for in-process test groups
  // (read once, before the first group records; a real rank has one group).
  ::setenv("TORCH_FR_BUFFER_SIZE", "0", 1);
  static std::mutex mutex;
  static std::map<std::string, c10::intrusive_ptr<c10d::Store>> stores;
  c10::intrusive_ptr<c10d::Store> store;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = stores[name];
    if (!slot) slot = c10::make_intrusive<c10d::HashStore>();
    store = slot;
  }
  store->setTimeout(timeouts.join);
  auto impl =
      make_group(c10::make_intrusive<c10d::PrefixStore>(fmt::format("attempt_{}/", attempt), store),
                 rank, size, Backend::kGloo, timeouts, c10::Device(c10::kCPU));
  impl->attempt = attempt;
  impl->records = job_records_in(store, name, attempt);
  return std::shared_ptr<Group>(new Group(std::move(impl)));
}

int Group::rank() const {
  return impl_->rank;
}
int Group::size() const {
  return impl_->size;
}
Backend Group::backend() const {
  return impl_->backend;
}
int Group::attempt() const {
  return impl_->attempt;
}

const std::shared_ptr<JobRecords>& Group::records() const {
  return impl_->records;
}

void Group::barrier() {
  guarded(*impl_, "barrier", [&] {
    std::vector<at::Tensor> one{torch::zeros({1}, torch::TensorOptions().device(impl_->device))};
    impl_->group->allreduce(one)->wait(impl_->timeouts.steady);
  });
}

void Group::wait_for_solo_work() {
  const std::string prefix = fmt::format("solo/{}/", ++impl_->solo_waits);
  const std::string mine = prefix + std::to_string(impl_->rank);
  std::vector<std::string> keys;
  for (int r = 0; r < impl_->size; ++r) keys.push_back(prefix + std::to_string(r));
  const std::string cause = "not every rank arrived in time";
  try {
    // Polled, not store->wait(): a blocking wait would hold the store client (which the heartbeat
    // shares) for up to an hour.
    impl_->store->set(mine, std::vector<uint8_t>{1});
    const auto deadline = std::chrono::steady_clock::now() + impl_->timeouts.solo;
    while (!impl_->store->check(keys)) {
      if (std::chrono::steady_clock::now() >= deadline) throw std::runtime_error(cause);
      std::this_thread::sleep_for(kSoloPoll);
    }
  } catch (const std::exception& e) {
    std::vector<int> missing;
    for (int r = 0; r < impl_->size; ++r) {
      try {
        if (!impl_->store->check({keys[static_cast<size_t>(r)]})) missing.push_back(r);
      } catch (const std::exception&) {
        break;  // the store itself is gone: the report below says so
      }
    }
    throw CommError(fmt::format(
        "rank {} of {}: the wait for a peer's solo work (local rank 0 building the label and disk "
        "caches) ran out after dist_solo_timeout={} s; not arrived: rank(s) {}; {}. c10d said: {}",
        impl_->rank, impl_->size, impl_->timeouts.solo.count() / 1000,
        missing.empty() ? std::string("?") : fmt::format("{}", fmt::join(missing, ", ")),
        peer_report(*impl_), e.what()));
  }
}

void Group::broadcast(const std::vector<at::Tensor>& tensors, int root) {
  if (tensors.empty()) return;
  guarded(*impl_, "broadcast", [&] {
    torch::NoGradGuard no_grad;
    c10d::broadcast_coalesced(impl_->group, tensors, kBroadcastBucketBytes, root);
  });
}

bool Group::any(bool flag) {
  return guarded(*impl_, "agreeing on a decision", [&] {
    std::vector<at::Tensor> t{torch::full(
        {1}, flag ? 1 : 0, torch::TensorOptions().dtype(torch::kInt).device(impl_->device))};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    impl_->group->allreduce(t, o)->wait(impl_->timeouts.steady);
    return t[0].item<int>() != 0;
  });
}

int64_t Group::broadcast_value(int64_t value, int root) {
  auto t =
      torch::full({1}, value, torch::TensorOptions().dtype(torch::kLong).device(impl_->device));
  broadcast({t}, root);
  return t.item<int64_t>();
}

double Group::broadcast_value(double value, int root) {
  auto t =
      torch::full({1}, value, torch::TensorOptions().dtype(torch::kDouble).device(impl_->device));
  broadcast({t}, root);
  return t.item<double>();
}

std::string Group::broadcast_text(const std::string& text, int root) {
  const auto n = broadcast_value(static_cast<int64_t>(text.size()), root);
  auto bytes = torch::zeros({std::max<int64_t>(n, 1)}, torch::kUInt8);
  if (impl_->rank == root) std::copy(text.begin(), text.end(), bytes.data_ptr<uint8_t>());
  bytes = bytes.to(impl_->device);
  broadcast({bytes}, root);
  bytes = bytes.cpu();
  const auto* p = bytes.data_ptr<uint8_t>();
  return std::string(p, p + n);
}

std::vector<std::string> Group::all_gather_text(const std::string& text) {
  std::vector<std::string> all;
  for (int root = 0; root < impl_->size; ++root) {
    all.push_back(broadcast_text(root == impl_->rank ? text : std::string(), root));
  }
  return all;
}

void Group::all_reduce_sum(at::Tensor& tensor) {
  guarded(*impl_, "all-reduce", [&] {
    std::vector<at::Tensor> t{tensor};
    impl_->group->allreduce(t)->wait(impl_->timeouts.steady);
  });
}

void run_local_rank_zero_first(Group* group, bool first, const std::function<void()>& work) {
  if (group && !first) group->wait_for_solo_work();
  std::exception_ptr failure;  // the first passes the barrier even when it fails
  try {
    work();
  } catch (...) {
    failure = std::current_exception();
  }
  if (group && first) group->wait_for_solo_work();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace trainer::distributed
