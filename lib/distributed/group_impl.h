// lib/distributed internal: the c10d objects behind a Group (only lib/distributed's sources include
// this).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <fmt/format.h>

#include <exception>
#include <string>

#include "distributed/group.h"

namespace trainer::distributed {

struct Group::Impl {
  int rank = 0;
  int size = 1;
  Backend backend = Backend::kGloo;
  std::chrono::milliseconds timeout{0};
  c10::Device device{c10::kCPU};  // where collective buffers live (CUDA for NCCL)
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
};

inline CommError comm_error(const Group::Impl& impl, const char* what, const std::string& cause) {
  return CommError(fmt::format(
      "rank {} of {}: {} failed: another rank has stopped (it died, or did not answer within "
      "dist_timeout={} s); its own log names the cause. c10d said: {}",
      impl.rank, impl.size, what, impl.timeout.count() / 1000, cause));
}

// Runs `what` and turns a c10d failure into CommError naming this rank and the usual causes.
template <class F>
auto guarded(const Group::Impl& impl, const char* what, F&& f) -> decltype(f()) {
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
