// See pickle_allow_list.h.
// Tested by tests/model/test_restricted_unpickler.cpp: globals off the allow-list refused, allowed
//   classes become inert records, protocol 2 module names.
#include "model/pickle_allow_list.h"

#include <array>

namespace trainer::model {
namespace {

struct StorageTypeInfo {
  std::string_view name;
  int element_size;
};
constexpr std::array<StorageTypeInfo, 13> kStorageTypes{{{"FloatStorage", 4},
                                                         {"DoubleStorage", 8},
                                                         {"HalfStorage", 2},
                                                         {"BFloat16Storage", 2},
                                                         {"LongStorage", 8},
                                                         {"IntStorage", 4},
                                                         {"ShortStorage", 2},
                                                         {"CharStorage", 1},
                                                         {"ByteStorage", 1},
                                                         {"BoolStorage", 1},
                                                         {"ComplexHalfStorage", 4},
                                                         {"ComplexFloatStorage", 8},
                                                         {"ComplexDoubleStorage", 16}}};

constexpr std::array<std::string_view, 21> kDtypes{
    "float16", "float32", "float64", "bfloat16", "half",      "float",      "double",
    "int8",    "int16",   "int32",   "int64",    "uint8",     "bool",       "long",
    "int",     "short",   "cfloat",  "cdouble",  "complex64", "complex128", "uint16"};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::optional<PickleCallable> allowed_global(std::string_view module, std::string_view name) {
  if (module == "torch._utils") {
    if (name == "_rebuild_tensor_v2") return PickleCallable::kRebuildTensor;
    if (name == "_rebuild_parameter" || name == "_rebuild_parameter_with_state") {
      return PickleCallable::kRebuildParam;
    }
    return std::nullopt;
  }
  if (module == "torch.jit._pickle") {  // LibTorch's typed containers (torch::pickle_save)
    for (const std::string_view f : {"build_intlist", "build_doublelist", "build_boollist",
                                     "build_tensorlist", "build_genericlist", "restore_type_tag"}) {
      if (name == f) return PickleCallable::kFirstArgument;
    }
    return std::nullopt;
  }
  if (module == "torch._tensor") {
    if (name == "_rebuild_from_type_v2") return PickleCallable::kRebuildFromType;
    return std::nullopt;
  }
  if (module == "torch") {
    if (name == "Size") return PickleCallable::kSize;
    if (name == "device" || name == "Tensor") return PickleCallable::kRecord;
    for (const auto& type : kStorageTypes) {
      if (name == type.name) return PickleCallable::kStorageType;
    }
    for (const auto dtype : kDtypes) {
      if (name == dtype) return PickleCallable::kRecord;
    }
    return std::nullopt;
  }
  if (module == "builtins") {
    if (name == "set" || name == "frozenset") return PickleCallable::kSet;
    if (name == "slice") return PickleCallable::kRecord;
    return std::nullopt;
  }
  if (module == "_codecs") {
    if (name == "encode") return PickleCallable::kEncode;
    return std::nullopt;
  }
  if (module == "collections" && name == "OrderedDict") return PickleCallable::kOrderedDict;
  for (const std::string_view ns : {"ultralytics", "torch.nn", "types", "collections", "pathlib"}) {
    if (module == ns || (starts_with(module, ns) && module[ns.size()] == '.')) {
      return PickleCallable::kRecord;
    }
  }
  return std::nullopt;
}

int storage_element_size(std::string_view type) {
  for (const auto& t : kStorageTypes) {
    if (type == t.name) return t.element_size;
  }
  return 0;
}

std::string_view canonical_module(std::string_view module) {
  if (module == "__builtin__") return "builtins";
  if (module == "copy_reg") return "copyreg";
  return module;
}

}  // namespace trainer::model
