// Which names a torch.save pickle may refer to, and what each one means to the restricted
// unpickler (model/restricted_unpickler.h). This list is also given in the README.
//   - torch._utils._rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state and
//     torch._tensor._rebuild_from_type_v2 (tensors and parameters), the storage types
//     torch.<Type>Storage, torch.Size, torch.device, torch.Tensor and the torch dtypes;
//   - torch.jit._pickle's build_intlist, build_doublelist, build_boollist, build_tensorlist,
//     build_genericlist and restore_type_tag (LibTorch's typed containers: their argument);
//   - builtins (Python 2 spelling __builtin__) set, frozenset and slice; collections.OrderedDict;
//     _codecs.encode (how protocol 2 spells bytes);
//   - any class under ultralytics., torch.nn., types., collections. and pathlib.
//
// Why a list of names and not of behaviours: nothing a pickle names is ever called, so a name
// only decides whether reading goes on. Everything else (os.system, subprocess.*,
// builtins.eval/exec/getattr/__import__, ...) is refused where it is named.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainer::model {

// What a GLOBAL names, as far as this reader is concerned.
enum class PickleCallable : uint8_t {
  kRecord,           // an allowed class or function: calling it makes an inert record
  kRebuildTensor,    // torch._utils._rebuild_tensor_v2
  kRebuildParam,     // torch._utils._rebuild_parameter(_with_state): the data tensor
  kRebuildFromType,  // torch._tensor._rebuild_from_type_v2(func, type, args, state)
  kOrderedDict,      // collections.OrderedDict: a dict
  kSet,              // builtins.set / frozenset
  kSize,             // torch.Size: a tuple
  kEncode,           // _codecs.encode(text, 'latin1'): bytes
  kStorageType,      // torch.<Type>Storage: only inside a persistent id
  kFirstArgument,    // torch.jit._pickle.build_*list / restore_type_tag: their first argument
};

// What `module.name` means here, or nullopt when it is not on the list. `module` is canonical.
std::optional<PickleCallable> allowed_global(std::string_view module, std::string_view name);

// The bytes per element of a storage type ("HalfStorage": 2), or 0 for a type not on the list.
int storage_element_size(std::string_view type);

// Python's name for the module `module` as pickle protocol 2 may spell it (__builtin__ -> builtins,
// copy_reg -> copyreg).
std::string_view canonical_module(std::string_view module);

}  // namespace trainer::model
