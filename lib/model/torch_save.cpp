// See torch_save.h.
// Tested by tests/engine/checkpoint/test_checkpoint.cpp: torch_save_bytes/torch_load_bytes round
//   trip of every checkpoint field bit for bit.
#include "model/torch_save.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "core/error.h"
#include "model/torch_file.h"

namespace trainer::model {

std::vector<char> torch_save_bytes(const c10::IValue& value) {
  std::vector<char> pickle_data;
  torch::jit::Pickler pickler(
      [&](const char* buf, size_t size) { pickle_data.insert(pickle_data.end(), buf, buf + size); },
      nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> container;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    container.insert(container.end(), bytes, bytes + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle_data.data(), pickle_data.size(),
                                     pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return container;
}

c10::IValue torch_load_bytes(const std::vector<char>& bytes,
                             const std::function<std::string(const std::string&)>& describe) {
  const TorchFile file(bytes, describe);
  return file.to_ivalue(file.root());
}

}  // namespace trainer::model
