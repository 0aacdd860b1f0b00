// A pickle reader that never runs anything: the one reader of every torch.save file the tool
// accepts (our checkpoints and weights, and the reference's checkpoints with their pickled
// modules).
//
// Why: a pickle is a program. Python's unpickler imports and calls whatever its GLOBAL opcodes
// name, and LibTorch's trusts every size the file declares; neither may see a file a user found on
// the internet. This reader executes the opcodes into plain records instead: containers,
// numbers and strings as themselves, tensors as views on named storage records, and a call or
// NEWOBJ of an allowed class as an inert record of the class name, its arguments and its BUILD
// state. Which names may appear at all: model/pickle_allow_list.h (and the README); any other
// GLOBAL is refused when it is read, before anything is built. Memory is linear in the pickle and
// bounded: every opcode adds at most one value (kMaxPickleValues in all), strings are copies of
// its bytes, and the memo only refers to values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/pickle_allow_list.h"

namespace trainer::model {

// A refusal or a corrupt pickle: what, and at which byte.
class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A storage a pickle names by persistent id ('storage', torch.<Type>Storage, key, location, numel):
// the record <archive>/data/<key> holds its elements.
struct PickledStorage {
  std::string key;
  std::string type;  // "HalfStorage", "FloatStorage", ...
  int element_size = 0;
  uint64_t elements = 0;
};

// A tensor rebuilt by torch._utils._rebuild_tensor_v2: a view on a storage, checked to lie inside
// it (offset + sum((size - 1) * stride) < elements, unless a size is 0).
struct PickledTensor {
  size_t storage = 0;  // index into PickleDocument::storages
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

enum class PyKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,  // unicode (UTF-8 bytes as written)
  kBytes,
  kList,
  kTuple,
  kDict,
  kSet,     // set and frozenset
  kGlobal,  // a name the pickle refers to (a class, a dtype, a function): never called
  kObject,  // an allowed class called or NEWOBJ'd: class name, arguments, state
  kStorage,
  kTensor,
};

struct PyValue {
  PyKind kind = PyKind::kNone;
  bool flag = false;            // kBool
  int64_t integer = 0;          // kInt
  double real = 0.0;            // kFloat
  std::string text;             // kString, kBytes; kGlobal, kObject: "module.name"
  std::vector<PyValue*> items;  // kList, kTuple, kSet; kObject: the arguments of its creation
  std::vector<std::pair<PyValue*, PyValue*>> entries;  // kDict; kObject: items set on it
  std::vector<PyValue*> appended;                      // kObject: items appended to it
  PyValue* state = nullptr;                            // kObject: the argument of BUILD
  size_t index = 0;                                    // kStorage, kTensor: into the document

  bool is(PyKind k) const { return kind == k; }
  // kDict, or a kObject's dict state: the value of string key `key` (the last one set), or null.
  const PyValue* get(std::string_view key) const;
  // A human name for messages: "dict", "ultralytics.nn.tasks.DetectionModel object", ...
  std::string describe() const;
};

// Everything one pickle built. Values live as long as the document; they may refer to each other
// in cycles (the memo allows it), so walkers must bound their depth.
struct PickleDocument {
  std::deque<PyValue> values;  // stable addresses
  std::vector<PickledStorage> storages;
  std::vector<PickledTensor> tensors;
  const PyValue* root = nullptr;
};

// The most values one pickle may build. A reference yolo26n checkpoint's pickle builds 31,000
// (stripped) to 49,000 (mid-training, with its optimizer state), and the larger scales have the
// same layers; a value is 144 bytes plus its items, so this bounds a hostile pickle near 300 MB.
constexpr size_t kMaxPickleValues = 2'000'000;

// Runs the pickle `data` (one complete pickle, ending in STOP). Throws PickleError for a refused
// global, a corrupt or truncated pickle, or a tensor that reaches past its storage.
PickleDocument read_pickle(const unsigned char* data, size_t size);

}  // namespace trainer::model
