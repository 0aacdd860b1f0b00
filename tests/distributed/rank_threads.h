// Test helper: N ranks of one in-process Gloo group, each on its own thread.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/group.h"

namespace trainer::test {

// Runs body(rank, group) on `size` threads that share a fresh group; rethrows the first failure
// (in rank order). `attempt` stands for torchrun's restart count: a later attempt under the same
// `name` sees the job records the earlier ones left (Group::job_record).
inline void run_ranks(const std::string& name, int size,
                      const std::function<void(int, distributed::Group&)>& body,
                      const distributed::Timeouts& timeouts = {std::chrono::seconds(60),
                                                               std::chrono::seconds(60),
                                                               std::chrono::seconds(60)},
                      int attempt = 0) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto group = distributed::Group::join_in_process(name, r, size, timeouts, attempt);
        body(r, *group);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace trainer::test
