// A bounded scan of a torch.save pickle (`<archive>/data.pkl`) before LibTorch's unpickler runs it.
//
// Why: LibTorch's unpickler trusts the pickle. It allocates a string as long as its length field
// says (fuzz finding: a 3 KB checkpoint whose pickle declared a 1.9 GB string), gives a storage the
// size its persistent id declares whatever the size of the record behind it, and sets a tensor's
// sizes and strides on its storage without a bounds check: a hostile weights file would make later
// reads run past a buffer. The scan follows each opcode's argument and replays the stack effects
// that build tensors (ints, strings, tuples, globals, the memo, as LibTorch's unpickler does), so
// it knows every storage LibTorch will read and every view it will set, in time and memory linear
// in the pickle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainer::model {

// A storage the pickle reads: the record `<archive>/data/<key>` must hold at least `bytes`.
// LibTorch copies the whole record for each of the `reads` persistent ids naming it.
struct StorageRead {
  std::string key;
  uint64_t bytes = 0;
  uint64_t reads = 0;
};

// The first problem found, or nullopt. `data` must be one complete pickle (ending in STOP) whose
// length-prefixed arguments and memo indices fit inside it, whose persistent ids are storages of
// a known type and whose rebuilt tensors lie inside their storages. When it passes, `storages`
// (if given) receives each storage with elements, once per key.
std::optional<std::string> check_pickle(const unsigned char* data, size_t size,
                                        std::vector<StorageRead>* storages = nullptr);

}  // namespace trainer::model
