// The largest single allocation a piece of code asks for: through operator new (std::vector,
// std::string, ...) and through cv::Mat's allocator.
//
// Why: a reader that sizes a container from a count read from a corrupt file may allocate
// gigabytes before it notices the file is too short (or throw std::bad_alloc, which the readers
// catch, so the result alone cannot tell). The tests that guard against that check the largest
// request instead. The test binary that links alloc_probe.cpp replaces the global operator new.
#pragma once

#include <cstddef>

namespace trainer::test {

// Records while alive (one at a time), from every thread.
class AllocationProbe {
 public:
  AllocationProbe();
  ~AllocationProbe();
  AllocationProbe(const AllocationProbe&) = delete;
  AllocationProbe& operator=(const AllocationProbe&) = delete;
  size_t largest_new() const;  // bytes of the largest operator new request
  size_t largest_mat() const;  // bytes of the largest cv::Mat allocation
};

}  // namespace trainer::test
