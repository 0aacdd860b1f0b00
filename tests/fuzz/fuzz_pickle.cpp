// Fuzz target: the restricted unpickler and the reading of a reference checkpoint's module tree
// (the pickle `<archive>/data.pkl` of a torch.save file, given alone).
//
// Why: every torch.save file the tool accepts, ours and the reference's, is read by this pickle
// machine; whatever the bytes, it must refuse with PickleError or build values whose tensor views
// lie inside their storages, in memory linear in the input, never crash or run anything.
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "model/reference_pickle.h"
#include "model/restricted_unpickler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer::model;
  try {
    const PickleDocument doc = read_pickle(data, size);
    FUZZ_CHECK(doc.root != nullptr);
    FUZZ_CHECK(doc.values.size() <= size);  // each opcode adds at most one value
    for (const PickledTensor& t : doc.tensors) {
      FUZZ_CHECK(t.storage < doc.storages.size());
      FUZZ_CHECK(t.sizes.size() == t.strides.size());
      bool empty = false;
      uint64_t last = static_cast<uint64_t>(t.offset);
      for (size_t d = 0; d < t.sizes.size(); ++d) {
        empty = empty || t.sizes[d] == 0;
        if (t.sizes[d] > 0)
          last += static_cast<uint64_t>(t.sizes[d] - 1) * static_cast<uint64_t>(t.strides[d]);
      }
      FUZZ_CHECK(empty || last < doc.storages[t.storage].elements);
    }
    if (is_reference_checkpoint(*doc.root)) {
      const ReferenceRecord record = read_reference_record(doc);
      for (const auto& entry : record.state) FUZZ_CHECK(entry.second->is(PyKind::kTensor));
    }
  } catch (const PickleError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
