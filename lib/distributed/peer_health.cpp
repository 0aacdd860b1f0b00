// Tested by tests/distributed/test_group.cpp: steady-state timeout CommError names dist_timeout and
//   reports the peer alive but behind.
// See group_impl.h. Each rank's heartbeat in the rendezvous store, and what a failed collective
// makes of it: a CommError that says which peer stopped beating, which is behind, or that the store
// itself is gone, instead of c10d's bare timeout. Apart from group.cpp (the rendezvous and the
// collectives) because it is the failure side: its own threads, deadlines and wording.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "distributed/group_impl.h"

namespace trainer::distributed {
namespace {

// How long a store read may block while a failure is being explained (a stopped store host).
constexpr auto kReportStoreTimeout = std::chrono::seconds(3);

// Every rank's heartbeat ({beat, collectives}; beat -1: none).
std::vector<std::pair<int64_t, int64_t>> read_heartbeats(const Heartbeat& heartbeat, int size) {
  heartbeat.store->setTimeout(kReportStoreTimeout);
  std::vector<std::pair<int64_t, int64_t>> beats(static_cast<size_t>(size), {-1, -1});
  for (int r = 0; r < size; ++r) {
    const std::string key = heartbeat_key(r);
    if (!heartbeat.store->check({key})) continue;
    const std::vector<uint8_t> bytes = heartbeat.store->get(key);
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    auto& [beat, collectives] = beats[static_cast<size_t>(r)];
    in >> beat >> collectives;
  }
  return beats;
}

// What two readings of the heartbeats, 2.5 intervals apart, say about the ranks other than `rank`
// (which is in its collective #`mine`).
std::string heartbeat_findings(const Heartbeat& heartbeat, int rank, int size, int64_t mine) {
  const auto first = read_heartbeats(heartbeat, size);
  std::this_thread::sleep_for(heartbeat.interval * 5 / 2);
  const auto second = read_heartbeats(heartbeat, size);
  std::vector<std::string> findings;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    const auto [beat0, count0] = first[static_cast<size_t>(r)];
    const auto [beat, count] = second[static_cast<size_t>(r)];
    if (beat < 0) {
      findings.push_back(fmt::format("rank {} has never sent a heartbeat", r));
    } else if (beat == beat0) {
      findings.push_back(fmt::format(
          "rank {} stopped sending heartbeats (killed, stopped or frozen; its last beat was "
          "from its collective #{}, this rank is in #{})",
          r, count, mine));
    } else if (count < mine) {
      findings.push_back(fmt::format(
          "rank {} is alive but behind (in its collective #{}, this rank in #{})", r, count, mine));
    }
  }
  if (findings.empty()) {
    return "every other rank is alive and as far as this one (a network problem, or a peer "
           "stuck inside the same collective)";
  }
  return fmt::format("{}", fmt::join(findings, "; "));
}

}  // namespace

std::string heartbeat_key(int rank) {
  return fmt::format("heartbeat/{}", rank);
}

// Beats every `interval` until stopped; a store that fails ends the beating quietly (the rank's
// own collectives report the failure).
void start_heartbeat(std::shared_ptr<Heartbeat> heartbeat, int rank) {
  std::thread([heartbeat, rank] {
    int64_t beat = 0;
    for (;;) {
      try {
        const std::string value = fmt::format("{} {}", ++beat, heartbeat->collectives.load());
        heartbeat->store->set(heartbeat_key(rank),
                              std::vector<uint8_t>(value.begin(), value.end()));
      } catch (...) {
        return;
      }
      std::unique_lock<std::mutex> lock(heartbeat->mutex);
      if (heartbeat->wake.wait_for(lock, heartbeat->interval,
                                   [&] { return heartbeat->stopping; })) {
        return;
      }
    }
  }).detach();
}

Group::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(heartbeat->mutex);
    heartbeat->stopping = true;
  }
  heartbeat->wake.notify_all();
}

std::string peer_report(Group::Impl& impl) {
  if (impl.size <= 1) return "no other rank";
  const std::string no_store =
      "the rendezvous store does not answer (its host, rank 0 or torchrun's agent, is stopped or "
      "gone)";
  // On a thread of its own with a deadline: a stopped store host blocks store reads for as long
  // as the connection's timeout (the join timeout), and the error must not wait for that.
  struct Report {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<std::string> text;
  };
  auto report = std::make_shared<Report>();
  const auto heartbeat = impl.heartbeat;  // kept alive by the thread if it outlives the group
  const int rank = impl.rank, size = impl.size;
  const int64_t mine = impl.heartbeat->collectives.load();
  std::thread([report, heartbeat, rank, size, mine, no_store] {
    std::string text;
    try {
      text = heartbeat_findings(*heartbeat, rank, size, mine);
    } catch (const std::exception&) {
      text = no_store;
    }
    std::lock_guard<std::mutex> lock(report->mutex);
    report->text = std::move(text);
    report->done.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(report->mutex);
  const auto deadline = impl.heartbeat->interval * 5 / 2 + kReportStoreTimeout;
  if (!report->done.wait_for(lock, deadline, [&] { return report->text.has_value(); })) {
    return no_store;
  }
  return *report->text;
}

CommError comm_error(Group::Impl& impl, const char* what, const std::string& cause) {
  const bool timed_out =
      cause.find("imed out") != std::string::npos || cause.find("imeout") != std::string::npos;
  const int64_t seconds = impl.timeouts.steady.count() / 1000;
  const std::string reason =
      timed_out ? fmt::format(
                      "no answer within dist_timeout={} s (the wait for the other ranks "
                      "in a steady-state collective)",
                      seconds)
                : fmt::format(
                      "another rank has stopped (it died, or did not answer within "
                      "dist_timeout={} s)",
                      seconds);
  return CommError(
      fmt::format("rank {} of {}: {} failed: {}; {}; its own log names the cause. "
                  "c10d said: {}",
                  impl.rank, impl.size, what, reason, peer_report(impl), cause));
}

}  // namespace trainer::distributed
