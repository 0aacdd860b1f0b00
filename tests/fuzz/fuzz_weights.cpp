// Fuzz target: the weights reader (a torch.save zip holding one pickled dict {name: tensor}).
//
// Why: `model=`, `pretrained=`, `val weights=`, `info` and `predict` read `.pt` files people
// download; a truncated, corrupt or hostile one must give core::InputError naming it, never a
// crash or an allocation out of proportion to the file. LibTorch's zip reader and unpickler run
// inside, after the structural check (model/torch_zip_check.h). The last byte of each storage and
// of each tensor's view is read, so that a storage past its record or a view past its storage is
// found (ASan reports the read).
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_support.h"
#include "model/weights_io.h"

namespace {

volatile unsigned char sink;

void touch_ends(const at::Tensor& tensor) {
  if (!tensor.device().is_cpu() || tensor.storage().nbytes() == 0) return;
  const auto* base = static_cast<const unsigned char*>(tensor.storage().data());
  sink = base[tensor.storage().nbytes() - 1];
  if (tensor.numel() == 0) return;
  int64_t last = tensor.storage_offset();
  for (int64_t d = 0; d < tensor.dim(); ++d) last += (tensor.size(d) - 1) * tensor.stride(d);
  sink = base[(last + 1) * static_cast<int64_t>(tensor.element_size()) - 1];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> bytes(reinterpret_cast<const char*>(data),
                                reinterpret_cast<const char*>(data) + size);
  try {
    for (const auto& entry : trainer::model::parse_weights(bytes, "fuzz.pt")) {
      touch_ends(entry.second);
    }
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
