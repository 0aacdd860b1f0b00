// See byte_stream.h.
// Tested by tests/data/test_cache_limits.cpp: ByteReader count/truncation checks via label-cache
//   parsing (impossible counts rejected, no big alloc).
#include "core/byte_stream.h"

#include <fmt/format.h>

#include <stdexcept>

namespace trainer::core {

uint64_t ByteReader::count(uint64_t min_bytes, const char* what) {
  const uint64_t n = pod<uint64_t>();
  const uint64_t left = in_.size() - pos_;
  if (n > left / min_bytes) {
    throw std::runtime_error(fmt::format("a count of {} {} where the {} bytes left hold at most {}",
                                         n, what, left, left / min_bytes));
  }
  return n;
}

void ByteReader::need(uint64_t n) const {
  if (n > in_.size() - pos_) throw std::runtime_error("truncated");
}

}  // namespace trainer::core
