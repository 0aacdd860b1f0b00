// The replaced global operator new and the recording cv::Mat allocator; see alloc_probe.h.
#include "alloc_probe.h"

#include <opencv2/core.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> g_recording{false};
std::atomic<size_t> g_largest_new{0};
std::atomic<size_t> g_largest_mat{0};

void record(std::atomic<size_t>& largest, size_t bytes) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  size_t seen = largest.load();
  while (bytes > seen && !largest.compare_exchange_weak(seen, bytes)) {
  }
}

void* allocate(size_t bytes) {
  record(g_largest_new, bytes);
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}

// Records the size, then hands the work to OpenCV's own allocator (which also frees).
class RecordingMatAllocator : public cv::MatAllocator {
 public:
  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data, size_t* step,
                         cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    size_t bytes = CV_ELEM_SIZE(type);
    for (int i = 0; i < dims; ++i) bytes *= static_cast<size_t>(sizes[i]);
    if (!data) record(g_largest_mat, bytes);
    return cv::Mat::getStdAllocator()->allocate(dims, sizes, type, data, step, flags, usage);
  }
  bool allocate(cv::UMatData* data, cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    return cv::Mat::getStdAllocator()->allocate(data, flags, usage);
  }
  void deallocate(cv::UMatData* data) const override {
    cv::Mat::getStdAllocator()->deallocate(data);
  }
};

RecordingMatAllocator g_mat_allocator;
cv::MatAllocator* g_previous_mat_allocator = nullptr;

}  // namespace

void* operator new(size_t bytes) {
  return allocate(bytes);
}
void* operator new[](size_t bytes) {
  return allocate(bytes);
}
// The nothrow forms too (std::get_temporary_buffer, behind stable_sort, uses them): a block from
// the sanitizer's own nothrow new freed by the free() below would be an alloc-dealloc mismatch.
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  record(g_largest_new, bytes);
  return std::malloc(bytes ? bytes : 1);
}
void* operator new[](size_t bytes, const std::nothrow_t&) noexcept {
  record(g_largest_new, bytes);
  return std::malloc(bytes ? bytes : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}

namespace trainer::test {

AllocationProbe::AllocationProbe() {
  g_largest_new = 0;
  g_largest_mat = 0;
  g_previous_mat_allocator = cv::Mat::getDefaultAllocator();
  cv::Mat::setDefaultAllocator(&g_mat_allocator);
  g_recording = true;
}

AllocationProbe::~AllocationProbe() {
  g_recording = false;
  cv::Mat::setDefaultAllocator(g_previous_mat_allocator);
}

size_t AllocationProbe::largest_new() const {
  return g_largest_new;
}

size_t AllocationProbe::largest_mat() const {
  return g_largest_mat;
}

}  // namespace trainer::test
