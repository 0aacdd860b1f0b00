// Peak memory of one benchmark arm (benchmark-method.md section 2).
//
// Why: a speed-up that costs memory must say so. On CUDA the claim is the caching allocator's peak
// allocated bytes for the device since the arm started; on CPU it is the peak resident set size of
// the process (VmHWM), which we reset at the start of the arm where the kernel allows it.
#pragma once

#include <cstdint>
#include <string>

namespace trainer::bench {

struct PeakMemory {
  std::string kind;    // "cuda_peak_allocated" or "cpu_peak_rss"
  std::string device;  // "cpu", "cuda:0"
  int64_t bytes = 0;
  bool since_reset = false;  // false: since process start (the reset was not possible)
};

// Starts a measurement window: resets the CUDA allocator's peak statistics for `device`, or the
// process's RSS high-water mark (/proc/self/clear_refs) on CPU. `device` is a LibTorch device
// string ("cpu", "cuda", "cuda:1"). Returns false when the reset was not possible.
bool reset_peak_memory(const std::string& device);

// The peak since the last reset_peak_memory() (or process start). Throws std::runtime_error for a
// CUDA device in a build without CUDA.
PeakMemory read_peak_memory(const std::string& device);

// VmHWM and VmRSS of this process in bytes (0 when /proc is unreadable).
int64_t process_peak_rss_bytes();
int64_t process_rss_bytes();

// Bytes as MiB with one decimal ("809.9").
double to_mib(int64_t bytes);

}  // namespace trainer::bench
