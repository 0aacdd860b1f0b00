// Reusable uint8 batch buffers for the loader workers.
//
// Why: a 16 x 640 x 640 x 3 batch is 20 MB; allocating it per batch costs page faults on every
// batch. CPU buffers are kept in a small pool and handed out again once nobody else references
// them (the consumer dropped its Batch). Pinned buffers (CUDA available) come from LibTorch's
// caching host allocator, which already pools them and knows when an asynchronous copy from a
// buffer has finished, so they are not pooled here.
#pragma once

#include <torch/types.h>

#include <mutex>
#include <vector>

namespace trainer::data {

class BufferPool {
 public:
  explicit BufferPool(bool pinned, size_t max_slots = 8) : pinned_(pinned), max_slots_(max_slots) {}

  // A (B, H, W, 3) uint8 tensor; its memory is reused only after every view of it is gone.
  torch::Tensor acquire(int64_t batch, int64_t height, int64_t width);

  bool pinned() const { return pinned_; }
  size_t slots() const;

 private:
  bool pinned_;
  size_t max_slots_;
  mutable std::mutex mutex_;
  std::vector<torch::Tensor> slots_;  // flat uint8 buffers owned by the pool
};

// Whether pinned host memory can be allocated (a CUDA build with a visible device).
bool pinned_memory_available();

}  // namespace trainer::data
