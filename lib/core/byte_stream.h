// Little-endian binary records: plain values, strings and vectors of plain values, written into a
// std::string and read back with every count checked against the bytes left.
//
// Why: the label cache (a file that may be truncated or corrupt) and sharded validation (each
// rank's statistics sent to rank 0) both need bit-exact round trips of floats and counts; text
// would round, and a corrupt count must be an error, not a multi-gigabyte allocation.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace trainer::core {

class ByteWriter {
 public:
  template <typename T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what a ByteWriter wrote. Throws std::runtime_error ("truncated", or an impossible count)
// on bytes that do not hold what is asked.
class ByteReader {
 public:
  explicit ByteReader(const std::string& in) : in_(in) {}
  template <typename T>
  T pod() {
    T v{};
    need(sizeof(T));
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str() {
    const uint64_t n = count(1, "bytes of text");
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  template <typename T>
  std::vector<T> vec() {
    const uint64_t n = count(sizeof(T), "values");
    std::vector<T> v(n);
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0
    // bytes (UBSan in the sanitizer build).
    if (n > 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  // A count read before anything of that size is allocated: each element takes at least
  // `min_bytes` of the bytes left, so a larger count is corruption, not a reason to allocate.
  uint64_t count(uint64_t min_bytes, const char* what);
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(uint64_t n) const;
  const std::string& in_;
  size_t pos_ = 0;
};

}  // namespace trainer::core
