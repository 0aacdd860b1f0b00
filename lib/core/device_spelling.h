// How a config names a device: `device: 0`, `cpu`, `cuda:1`, or nothing.
//
// Why: the trainer, `trainer val` and the benchmarks all read the same key; one parser (without
// LibTorch) keeps the accepted spellings and the error identical, and leaves to each caller what
// it checks about the machine (engine::resolve_device checks CUDA is built in and visible; a
// benchmark record only needs the name).
#pragma once

#include <string>
#include <vector>

namespace trainer::core {

struct DeviceSpelling {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;  // kAuto: "" (a GPU when one is usable, else the CPU)
  int index = 0;            // kCuda only
};

// "" -> auto; "cpu" -> cpu; "N", "cuda", "cuda:N" -> cuda N (case-insensitive). Anything else
// ("0,1", "gpu", "cuda:") throws ConfigError naming the value and the accepted forms.
DeviceSpelling parse_device(const std::string& text);

// A data-parallel device list, one entry per local rank: "0,1,2" -> {"0", "1", "2"}, "cpu,cpu" ->
// two CPU ranks (the CPU test bed); a single spelling gives one entry. Each entry must parse.
std::vector<std::string> split_device_list(const std::string& text);

// The device spelling of local rank `local_rank` of `local_world_size` ranks on this machine: the
// list's entry; "" (auto) and "cuda" become cuda:LOCAL_RANK when a GPU is used; "cpu" stays. A
// single GPU index with several local ranks, or a list of another length, is a ConfigError.
std::string device_for_rank(const std::string& text, int local_rank, int local_world_size);

}  // namespace trainer::core
