// Which optimizer a run asks for, as a type instead of a string.
//
// Why: the choice used to travel as "MuSGD"/"SGD"/"AdamW" strings compared in the engine. The
// kind is owned here, next to the optimizers it names; the header is torch-free and header-only
// so the configuration (lib/core) can hold the user's request. `kAuto` is only a request:
// choose_optimizer() (optim/optimizer_choice.h) resolves it to a concrete kind.
#pragma once

#include <optional>
#include <string_view>

namespace trainer::optim {

enum class OptimizerKind { kAuto, kMuSGD, kSGD, kAdamW };

// The reference's spelling ("auto", "MuSGD", "SGD", "AdamW"): what args.yaml and checkpoints store.
constexpr const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAuto:
      return "auto";
    case OptimizerKind::kMuSGD:
      return "MuSGD";
    case OptimizerKind::kSGD:
      return "SGD";
    case OptimizerKind::kAdamW:
      return "AdamW";
  }
  return "?";
}

// The kind spelled `name` exactly as optimizer_kind_name() writes it; nullopt otherwise.
inline std::optional<OptimizerKind> optimizer_kind_from_name(std::string_view name) {
  for (auto kind :
       {OptimizerKind::kAuto, OptimizerKind::kMuSGD, OptimizerKind::kSGD, OptimizerKind::kAdamW}) {
    if (name == optimizer_kind_name(kind)) return kind;
  }
  return std::nullopt;
}

}  // namespace trainer::optim
