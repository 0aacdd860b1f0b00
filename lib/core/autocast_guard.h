// RAII autocast scope for one device type, like Python's `with torch.autocast(...)`.
//
// Why: LibTorch's autocast switches are thread-local setters, so braces restore nothing; a guard
// that remembers and restores the previous state (and clears the cast cache on the way out) keeps
// BF16 to the forward pass and the loss, with backward and validation outside it.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace trainer::core {

class AutocastGuard {
 public:
  // Enables autocast to `dtype` on `device` when `enabled`; a disabled guard still restores state.
  // cache_enabled false: no cast cache inside (a CUDA graph capture must not keep casts made
  // during capture as cached tensors; Python's torch.cuda.graphs requires the cache off). Unset:
  // the enclosing setting, so a nested guard inside a capture keeps the cache off.
  AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled,
                std::optional<bool> cache_enabled = std::nullopt);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool previous_enabled_;
  c10::ScalarType previous_dtype_;
  bool previous_cache_enabled_;
};

}  // namespace trainer::core
