// Fuzz target: the checkpoint loader (a torch.save zip holding one pickled dict).
//
// Why: `resume=` and `trainer val weights=` take any file; a truncated, corrupt or foreign one must
// give core::InputError naming it, never a crash. LibTorch's zip reader and unpickler run inside.
#include <vector>

#include "core/error.h"
#include "engine/checkpoint/checkpoint.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> bytes(reinterpret_cast<const char*>(data),
                                reinterpret_cast<const char*>(data) + size);
  try {
    trainer::engine::parse_checkpoint(bytes, "fuzz.ckpt");
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
