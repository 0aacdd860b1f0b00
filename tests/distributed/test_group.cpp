// The group's agreed decisions on 2 and 3 in-process Gloo ranks: barrier, any, broadcasts, sums.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"
#include "distributed/local_launcher.h"
#include "rank_threads.h"

using trainer::distributed::Group;
using trainer::distributed::Timeouts;
using trainer::test::run_ranks;

TEST_CASE("group: any() is true on every rank when one rank's flag is") {
  std::mutex m;
  std::vector<int> seen(3, -1), none(3, -1), ids(3, -1), sizes(3, -1);
  run_ranks("any", 3, [&](int rank, Group& g) {
    ids[static_cast<size_t>(rank)] = g.rank();
    sizes[static_cast<size_t>(rank)] = g.size();
    const bool one = g.any(rank == 2);
    const bool zero = g.any(false);
    std::lock_guard<std::mutex> lock(m);
    seen[static_cast<size_t>(rank)] = one;
    none[static_cast<size_t>(rank)] = zero;
  });
  CHECK(ids == std::vector<int>{0, 1, 2});
  CHECK(sizes == std::vector<int>{3, 3, 3});
  CHECK(seen == std::vector<int>{1, 1, 1});
  CHECK(none == std::vector<int>{0, 0, 0});
}

TEST_CASE("group: broadcasts give rank 0's values (tensors, numbers, text)") {
  std::mutex m;
  std::vector<std::string> texts(2);
  std::vector<int64_t> ints(2);
  std::vector<double> reals(2);
  std::vector<at::Tensor> tensors(2);
  run_ranks("broadcast", 2, [&](int rank, Group& g) {
    auto t = torch::full({3, 2}, static_cast<float>(rank + 1));
    auto u = torch::arange(5, torch::kLong) * (rank + 1);
    g.broadcast({t, u}, 0);
    const auto text = g.broadcast_text(rank == 0 ? "runs/detect/train7" : "other", 0);
    const auto i = g.broadcast_value(static_cast<int64_t>(40 + rank), 0);
    const auto d = g.broadcast_value(0.25 + rank, 0);
    g.barrier();
    std::lock_guard<std::mutex> lock(m);
    texts[static_cast<size_t>(rank)] = text;
    ints[static_cast<size_t>(rank)] = i;
    reals[static_cast<size_t>(rank)] = d;
    tensors[static_cast<size_t>(rank)] = torch::cat({t.flatten(), u.to(torch::kFloat)});
  });
  CHECK(texts == std::vector<std::string>{"runs/detect/train7", "runs/detect/train7"});
  CHECK(ints == std::vector<int64_t>{40, 40});
  CHECK(reals == std::vector<double>{0.25, 0.25});
  const auto expected = torch::tensor({1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 0.f, 1.f, 2.f, 3.f, 4.f});
  CHECK(torch::equal(tensors[0], expected));
  CHECK(torch::equal(tensors[1], expected));
}

TEST_CASE("group: all_gather_text gives every rank each rank's text, by rank") {
  std::mutex m;
  std::vector<std::vector<std::string>> got(3);
  run_ranks("gather", 3, [&](int rank, Group& g) {
    // Rank 1 sends nothing, rank 2 bytes with a NUL inside.
    const std::string mine = rank == 0 ? "zero" : rank == 1 ? "" : std::string("t\0wo", 4);
    auto all = g.all_gather_text(mine);
    std::lock_guard<std::mutex> lock(m);
    got[static_cast<size_t>(rank)] = std::move(all);
  });
  const std::vector<std::string> expected = {"zero", "", std::string("t\0wo", 4)};
  for (const auto& g : got) CHECK(g == expected);
}

TEST_CASE("group: all_reduce_sum adds the ranks' tensors") {
  std::mutex m;
  std::vector<at::Tensor> out(2);
  run_ranks("sum", 2, [&](int rank, Group& g) {
    auto t = torch::tensor({1.0, 2.0}) * (rank + 1);  // {1, 2} and {2, 4}
    g.all_reduce_sum(t);
    std::lock_guard<std::mutex> lock(m);
    out[static_cast<size_t>(rank)] = t;
  });
  CHECK(torch::equal(out[0], torch::tensor({3.0, 6.0})));
  CHECK(torch::equal(out[1], torch::tensor({3.0, 6.0})));
}

TEST_CASE("job records outlive an attempt, and a later attempt has fresh collectives") {
  const Timeouts t{std::chrono::seconds(60), std::chrono::seconds(60), std::chrono::seconds(60)};
  std::mutex m;
  std::vector<std::optional<std::string>> seen(2), missing(2);
  std::vector<int> attempts(2, -1);
  run_ranks(
      "records", 2,
      [&](int rank, Group& g) {
        CHECK(g.attempt() == 0);
        if (rank == 0) g.records()->set("run", "abc\nruns/x");
        g.barrier();
        CHECK(g.records()->get("run") == std::optional<std::string>("abc\nruns/x"));
      },
      t, 0);
  run_ranks(
      "records", 2,
      [&](int rank, Group& g) {
        // A barrier first: the second attempt's Gloo meets in its own keys, not attempt 0's.
        g.barrier();
        std::lock_guard<std::mutex> lock(m);
        attempts[static_cast<size_t>(rank)] = g.attempt();
        seen[static_cast<size_t>(rank)] = g.records()->get("run");
        missing[static_cast<size_t>(rank)] = g.records()->get("committed");
      },
      t, 1);
  for (int r = 0; r < 2; ++r) {
    CHECK(attempts[static_cast<size_t>(r)] == 1);
    CHECK(seen[static_cast<size_t>(r)] == std::optional<std::string>("abc\nruns/x"));
    CHECK_FALSE(missing[static_cast<size_t>(r)]);
  }
}

TEST_CASE("backend: empty picks gloo on the CPU, unknown names and nccl on the CPU are refused") {
  using trainer::distributed::Backend;
  using trainer::distributed::choose_backend;
  CHECK(choose_backend("", false) == Backend::kGloo);
  CHECK(choose_backend("gloo", true) == Backend::kGloo);
  CHECK_THROWS_AS(choose_backend("mpi", false), trainer::core::ConfigError);
  CHECK_THROWS_AS(choose_backend("nccl", false), trainer::core::ConfigError);
  if (!trainer::distributed::nccl_available()) {
    CHECK(choose_backend("", true) == Backend::kGloo);
  }
}

TEST_CASE("join: without MASTER_ADDR a multi-rank environment is a clear error") {
  trainer::distributed::GroupOptions o;
  o.env.rank = 0;
  o.env.world_size = 2;
  o.env.master_port = 29500;
  CHECK_THROWS_WITH_AS(Group::join(o), doctest::Contains("MASTER_ADDR/MASTER_PORT are not set"),
                       trainer::core::ConfigError);
}

TEST_CASE("join: a rank that never comes fails the others within the timeout, naming the cause") {
  trainer::distributed::GroupOptions o;
  o.env.rank = 0;
  o.env.world_size = 2;  // rank 1 is never started
  o.env.master_addr = "127.0.0.1";
  o.env.master_port = trainer::distributed::free_local_port();
  o.timeouts.join = std::chrono::seconds(2);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(Group::join(o), doctest::Contains("did not all meet"),
                       trainer::core::ConfigError);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("join: MASTER_PORT held by another program is named as in use") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  trainer::distributed::GroupOptions o;
  o.env.rank = 0;
  o.env.world_size = 2;
  o.env.master_addr = "127.0.0.1";
  o.env.master_port = ntohs(addr.sin_port);
  o.timeouts.join = std::chrono::seconds(2);
  CHECK_THROWS_WITH_AS(Group::join(o), doctest::Contains("is in use"), trainer::core::ConfigError);
  ::close(fd);
}

namespace {

// The local addresses (hex, as /proc/net/tcp{,6} writes them) of the sockets listening on `port`.
std::vector<std::string> listeners_on(int port) {
  std::vector<std::string> found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string slot, local, remote, state;
      row >> slot >> local >> remote >> state;
      const auto colon = local.rfind(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) {
        found.push_back(local.substr(0, colon));
      }
    }
  }
  return found;
}

}  // namespace

TEST_CASE("join: rank 0's store takes the launcher's loopback socket and listens nowhere else") {
  // Before: the store bound *:PORT itself (every interface; an unauthenticated store reachable
  // from the network), after the launcher had released the port it had picked.
  int port = 0;
  const int fd = trainer::distributed::listen_on_loopback(&port);
  ::setenv(trainer::distributed::kStoreListenFdVariable, std::to_string(fd).c_str(), 1);
  trainer::distributed::GroupOptions o;
  o.env.rank = 0;
  o.env.world_size = 1;
  o.env.master_addr = "127.0.0.1";
  o.env.master_port = port;
  o.timeouts.join = std::chrono::seconds(20);
  const auto group = Group::join(o);
  CHECK(::getenv(trainer::distributed::kStoreListenFdVariable) == nullptr);  // not passed on
  const auto listening = listeners_on(port);
  CHECK_FALSE(listening.empty());
  for (const auto& address : listening) {
    CAPTURE(address);
    CHECK(address == "0100007F");  // 127.0.0.1, as /proc/net/tcp writes it
  }
  CHECK(group->any(true));
}

TEST_CASE("collectives run on the rank's training device: the CPU for Gloo, its GPU for NCCL") {
  using trainer::distributed::Backend;
  using trainer::distributed::collective_device;
  const c10::Device gpu2(c10::kCUDA, 2);
  CHECK(collective_device(Backend::kGloo, gpu2) == c10::Device(c10::kCPU));
  CHECK(collective_device(Backend::kNccl, gpu2) == gpu2);  // device=2,3: rank 0 on cuda:2
  CHECK(collective_device(Backend::kNccl, c10::Device(c10::kCUDA, 3)).index() == 3);
  CHECK_THROWS_AS(collective_device(Backend::kNccl, c10::Device(c10::kCPU)),
                  trainer::core::ConfigError);
}

TEST_CASE("timeouts: a peer's solo work may outlast the steady-state timeout, not the solo one") {
  using namespace std::chrono_literals;
  // Steady 0.5 s, solo 20 s: rank 0 works 1.5 s before the solo wait, and rank 1 waits for it.
  std::atomic<bool> joined{false};
  run_ranks("solo-ok", 2,
            [&](int rank, Group& g) {
              trainer::distributed::run_local_rank_zero_first(&g, rank == 0, [&] {
                if (rank == 0) std::this_thread::sleep_for(1500ms);
              });
              joined = true;
            },
            {20s, 20s, 500ms});
  CHECK(joined);
  // Solo 1 s: rank 0's 3 s of work makes rank 1 fail, naming the wait, its key and rank 0.
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  std::mutex m;
  run_ranks("solo-late", 2,
            [&](int rank, Group& g) {
              try {
                trainer::distributed::run_local_rank_zero_first(&g, rank == 0, [&] {
                  if (rank == 0) std::this_thread::sleep_for(3s);
                });
              } catch (const trainer::distributed::CommError& e) {
                std::lock_guard<std::mutex> lock(m);
                if (rank == 1) error = e.what();
              }
            },
            {20s, 1s, 20s});
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK(error.find("rank 1 of 2: the wait for a peer's solo work") != std::string::npos);
  CHECK(error.find("dist_solo_timeout=1 s; not arrived: rank(s) 0") != std::string::npos);
}

TEST_CASE("timeouts: a late peer fails the steady-state wait, and the error says who is behind") {
  using namespace std::chrono_literals;
  std::string error;
  std::mutex m;
  const auto start = std::chrono::steady_clock::now();
  run_ranks("steady-late", 2,
            [&](int rank, Group& g) {
              g.barrier();  // collective #1 of both (an in-process group has no join barrier)
              if (rank == 1) std::this_thread::sleep_for(4s);
              try {
                (void)g.any(false);
              } catch (const trainer::distributed::CommError& e) {
                std::lock_guard<std::mutex> lock(m);
                if (rank == 0) error = e.what();
              }
            },
            {20s, 20s, 1s});
  CAPTURE(error);
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  CHECK(error.find("rank 0 of 2: agreeing on a decision failed: no answer within "
                   "dist_timeout=1 s (the wait for the other ranks in a steady-state "
                   "collective)") != std::string::npos);
  CHECK(error.find("rank 1 is alive but behind (in its collective #1, this rank in #2)") !=
        std::string::npos);
}
