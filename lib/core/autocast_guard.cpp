// See autocast_guard.h. Mirrors torch.autocast.__enter__/__exit__: set, nest; on exit un-nest,
// clear the cast cache at the outermost exit, restore the flag and the dtype.
#include "core/autocast_guard.h"

#include <ATen/autocast_mode.h>

namespace trainer::core {

AutocastGuard::AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled,
                             std::optional<bool> cache_enabled)
    : device_(device),
      previous_enabled_(at::autocast::is_autocast_enabled(device)),
      previous_dtype_(at::autocast::get_autocast_dtype(device)),
      previous_cache_enabled_(at::autocast::is_autocast_cache_enabled()) {
  if (cache_enabled) at::autocast::set_autocast_cache_enabled(*cache_enabled);
  at::autocast::set_autocast_enabled(device_, enabled);
  at::autocast::set_autocast_dtype(device_, dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
  at::autocast::set_autocast_cache_enabled(previous_cache_enabled_);
}

}  // namespace trainer::core
