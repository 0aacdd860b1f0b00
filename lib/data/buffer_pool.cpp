// Batch buffer reuse; see buffer_pool.h.
// Tested by tests/data/test_loader.cpp: BufferPool reuses a buffer only after release, slot count.
#include "data/buffer_pool.h"

#include <ATen/Context.h>

namespace trainer::data {

bool pinned_memory_available() {
  return at::globalContext().hasCUDA();
}

size_t BufferPool::slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

torch::Tensor BufferPool::acquire(int64_t batch, int64_t height, int64_t width) {
  const int64_t numel = batch * height * width * 3;
  if (pinned_) {
    return torch::empty({batch, height, width, 3},
                        torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& slot : slots_) {
    // use_count 1: only the pool holds the storage (every handed-out view has been released).
    if (slot.storage().use_count() == 1 && slot.numel() >= numel) {
      return slot.narrow(0, 0, numel).view({batch, height, width, 3});
    }
  }
  torch::Tensor slot = torch::empty({numel}, torch::kUInt8);
  if (slots_.size() < max_slots_) {
    slots_.push_back(slot);
  } else {  // replace the smallest free slot, or hand out an unpooled buffer
    for (auto& old : slots_) {
      if (old.storage().use_count() == 1) {
        old = slot;
        break;
      }
    }
  }
  return slot.view({batch, height, width, 3});
}

}  // namespace trainer::data
