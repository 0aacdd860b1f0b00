// A torch.save file opened by the restricted unpickler: the values its pickle built and the
// tensors on its storage records, made only when asked for.
//
// Why: every file the tool accepts (our checkpoints and weights, the reference's checkpoints)
// comes through here, so every one gets the same checks: the zip index (model/torch_zip_index.h),
// the allow-listed pickle (model/restricted_unpickler.h), storage records at least as large as
// their declared storages, and views inside them. Memory stays within a small multiple of the
// file: the pickle's values are linear in it, a storage is copied from the file once however many
// tensors view it, and containers that share a value are converted once.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/restricted_unpickler.h"
#include "model/torch_zip_index.h"

namespace trainer::model {

// Turns a problem found in the file into the error message (which names the file).
using DescribeProblem = std::function<std::string(const std::string&)>;

class TorchFile {
 public:
  // Indexes `bytes` (which must outlive this object) and runs its pickle. Throws
  // core::InputError(describe(problem)).
  TorchFile(const std::vector<char>& bytes, DescribeProblem describe);

  const PyValue& root() const { return *pickle_.root; }
  const PickleDocument& pickle() const { return pickle_; }

  // The tensor a kTensor value views, sharing its storage with other views of it. Throws
  // core::InputError when the storage record is missing or smaller than its storage.
  at::Tensor tensor(const PyValue& value) const;

  // `value` as LibTorch's own unpickler would give it (dicts, lists, tuples, strings, numbers,
  // bools, None, tensors); a container reached twice is the same IValue. Throws core::InputError
  // for objects, sets, bytes, cycles and nesting deeper than 128.
  c10::IValue to_ivalue(const PyValue& value) const;

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  c10::IValue convert(const PyValue& value, int depth,
                      std::map<const PyValue*, c10::IValue>& done) const;

  const std::vector<char>& bytes_;
  DescribeProblem describe_;
  TorchZipIndex index_;
  PickleDocument pickle_;
  mutable std::map<std::string, at::Tensor> storages_;  // by key: the record's elements
};

}  // namespace trainer::model
