// The decode budget's semaphore and the reservation of one decode; see decode_budget.h.
#include "data/decode_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <optional>
#include <streambuf>
#include <string>
#include <utility>

#include "data/image_codec.h"
#include "data/image_files.h"

namespace trainer::data {
namespace {

// A read-only istream over bytes in memory, seekable as the header parser needs (no copy).
class ByteBuffer : public std::streambuf {
 public:
  ByteBuffer(const uint8_t* data, size_t size) {
    char* begin = const_cast<char*>(reinterpret_cast<const char*>(data));
    setg(begin, begin, begin + size);
  }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    const off_type base = dir == std::ios_base::beg   ? 0
                          : dir == std::ios_base::cur ? gptr() - eback()
                                                      : egptr() - eback();
    return seekpos(pos_type(base + off), std::ios_base::in);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode) override {
    const off_type at = off_type(pos);
    if (at < 0 || at > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + at, egptr());
    return pos;
  }
};

uint32_t le16(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8;
}
uint32_t le24(const uint8_t* p) {
  return le16(p) | uint32_t(p[2]) << 16;
}
uint32_t le32(const uint8_t* p) {
  return le24(p) | uint32_t(p[3]) << 24;
}

// Width and height of a BMP or WebP from its first 30 bytes (OpenCV decodes both; their sizes are
// as cheap to read as a PNG's). TIFF's needs its directory walked: it is left unknown.
std::optional<std::pair<int64_t, int64_t>> bmp_or_webp_size(const std::vector<uint8_t>& b) {
  if (b.size() >= 26 && b[0] == 'B' && b[1] == 'M') {
    if (le32(&b[14]) == 12) return std::pair<int64_t, int64_t>(le16(&b[18]), le16(&b[20]));
    const int64_t height = static_cast<int32_t>(le32(&b[22]));  // negative: rows top-down
    return std::pair<int64_t, int64_t>(static_cast<int32_t>(le32(&b[18])), std::abs(height));
  }
  if (b.size() < 30 || std::memcmp(&b[0], "RIFF", 4) != 0 || std::memcmp(&b[8], "WEBP", 4) != 0) {
    return std::nullopt;
  }
  if (std::memcmp(&b[12], "VP8 ", 4) == 0 && b[23] == 0x9D && b[24] == 0x01 && b[25] == 0x2A) {
    return std::pair<int64_t, int64_t>(le16(&b[26]) & 0x3FFF, le16(&b[28]) & 0x3FFF);
  }
  if (std::memcmp(&b[12], "VP8L", 4) == 0 && b[20] == 0x2F) {
    const uint32_t bits = le32(&b[21]);
    return std::pair<int64_t, int64_t>((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1);
  }
  if (std::memcmp(&b[12], "VP8X", 4) == 0) {
    return std::pair<int64_t, int64_t>(int64_t{le24(&b[24])} + 1, int64_t{le24(&b[27])} + 1);
  }
  return std::nullopt;
}

}  // namespace

DecodeBudget::DecodeBudget(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

DecodeBudget::Grant::Grant(Grant&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DecodeBudget::Grant& DecodeBudget::Grant::operator=(Grant&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DecodeBudget::Grant::release() {
  if (budget_) budget_->release(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

DecodeBudget::Grant DecodeBudget::acquire(int64_t bytes) {
  if (bytes <= 0) return Grant();
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  // The first in line is granted when it fits beside what is held, or, larger than the whole
  // budget, when nothing is held.
  changed_.wait(
      lock, [&] { return ticket == serving_ && (in_use_ == 0 || in_use_ + bytes <= capacity_); });
  --waiting_;
  ++serving_;
  in_use_ += bytes;
  changed_.notify_all();  // the next in line may fit too
  return Grant(this, bytes);
}

void DecodeBudget::release(int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
  }
  changed_.notify_all();
}

void DecodeBudget::set_capacity(int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
  }
  changed_.notify_all();
}

int64_t DecodeBudget::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_;
}

int64_t DecodeBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

int DecodeBudget::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_;
}

int64_t gib_to_bytes(double gib) {
  return static_cast<int64_t>(std::llround(gib * double(int64_t{1} << 30)));
}

DecodeBudget& process_decode_budget() {
  // Never destroyed: a detached thread may still release into it while the process exits.
  static DecodeBudget* budget = new DecodeBudget(gib_to_bytes(kDefaultDecodeBudgetGib));
  return *budget;
}

void set_decode_budget_gib(double gib) {
  process_decode_budget().set_capacity(gib_to_bytes(gib));
}

int64_t unknown_size_reservation_bytes() {
  return kMaxImagePixels * kDecodeBytesPerPixel;
}

int64_t decode_reservation_bytes(int64_t width, int64_t height) {
  if (width <= 0 || height <= 0) return unknown_size_reservation_bytes();
  // Sides capped first, so the product cannot overflow.
  const int64_t pixels = std::min(width, kMaxImagePixels) * std::min(height, kMaxImagePixels);
  return std::min(pixels, kMaxImagePixels) * kDecodeBytesPerPixel;
}

int64_t decode_reservation_bytes(const std::vector<uint8_t>& encoded) {
  ByteBuffer buffer(encoded.data(), encoded.size());
  std::istream in(&buffer);
  std::string error;
  bool other_format = false;
  const std::optional<ImageHeader> header = parse_image_header(in, &error, &other_format);
  if (header) return decode_reservation_bytes(header->width, header->height);
  if (const auto size = other_format ? bmp_or_webp_size(encoded) : std::nullopt) {
    return decode_reservation_bytes(size->first, size->second);
  }
  return unknown_size_reservation_bytes();
}

}  // namespace trainer::data
