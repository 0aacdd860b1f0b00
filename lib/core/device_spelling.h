// How a config names a device: `device: 0`, `cpu`, `cuda:1`, or nothing.
//
// Why: the trainer, `trainer val` and the benchmarks all read the same key; one parser (without
// LibTorch) keeps the accepted spellings and the error identical, and leaves to each caller what
// it checks about the machine (engine::resolve_device checks CUDA is built in and visible; a
// benchmark record only needs the name).
#pragma once

#include <string>

namespace trainer::core {

struct DeviceSpelling {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;  // kAuto: "" (a GPU when one is usable, else the CPU)
  int index = 0;            // kCuda only
};

// "" -> auto; "cpu" -> cpu; "N", "cuda", "cuda:N" -> cuda N (case-insensitive). Anything else
// ("0,1", "gpu", "cuda:") throws ConfigError naming the value and the accepted forms.
DeviceSpelling parse_device(const std::string& text);

}  // namespace trainer::core
