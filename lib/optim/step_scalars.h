// Values that change between training steps (learning rate, momentum, the EMA weight, ...) as 0-d
// views of one device vector: what a captured CUDA graph reads instead of host numbers.
//
// Why: a graph replays its kernels with the arguments they were captured with, so a host double
// passed as a Scalar would be frozen at its capture value. A slot is a device tensor at a fixed
// address; the host writes the step's values into a staging buffer (pinned on CUDA) and one
// non-blocking copy per step moves them all. Two staging buffers take turns: after upload k the
// other buffer is written next, and the first write to it (step k+1's) waits for copy k-1, its
// last reader, then takes over copy k's values (a host read, safe while copy k is in flight). So
// the host can queue two steps ahead of the device, and a pending copy never sees half-written
// values.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Event.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace trainer::optim {

class StepScalars {
 public:
  // One fp64 slot per name, all 0, on `device`.
  StepScalars(std::vector<std::string> names, const at::Device& device);

  // The 0-d fp64 slot `name` on the device (the same tensor, at the same address, every step).
  const at::Tensor& slot(const std::string& name) const;
  // Writes `value` for the next upload(); a slot not set keeps the value it was last given.
  void set(const std::string& name, double value);
  // Copies every slot's value to the device: one copy, non-blocking on CUDA.
  void upload();

  const std::vector<std::string>& names() const { return names_; }
  // Uploads so far (tests: which staging buffer is next is `uploads() % 2`).
  int64_t uploads() const { return uploads_; }

 private:
  size_t index(const std::string& name) const;
  // Before the first write after an upload: wait for the written buffer's last copy, then fill it
  // with the values just uploaded.
  void refill();

  std::vector<std::string> names_;
  std::array<at::Tensor, 2> staging_;  // (n) fp64 each, pinned on CUDA; `current_` is written
  size_t current_ = 0;
  at::Tensor device_;  // (n) fp64
  std::vector<at::Tensor> slots_;
  std::array<std::optional<c10::Event>, 2> read_;  // CUDA: recorded after the copy from each
  int64_t uploads_ = 0;
  bool refill_pending_ = false;
};

}  // namespace trainer::optim
