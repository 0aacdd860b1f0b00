// The device a benchmark runs on, from the config's `device` spelling.
//
// Why: configs say `device: 0` or `cpu` (the reference's spelling) or nothing; peak memory, sync
// and the run record need one LibTorch device string ("cpu", "cuda:0").
#pragma once

#include <string>

namespace trainer::bench {

// The spellings of core::parse_device without the machine checks: "" -> "cuda:0" when a GPU
// is usable, else "cpu"; "0", "1" -> "cuda:N"; "cuda" -> "cuda:0";
// "cpu", "cuda:N" unchanged. Throws core::ConfigError for anything else (e.g. "0,1").
std::string resolve_device(const std::string& device);

}  // namespace trainer::bench
