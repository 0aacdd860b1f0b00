// A cap on the decoded pixels in memory at once, shared by every thread that decodes images.
//
// Why: a JPEG or PNG header may claim up to kMaxImagePixels (2^30) pixels, 3 GiB once decoded, and
// the bytes that claim it can be a few hundred kilobytes (a decompression bomb, or a folder of
// legitimate panoramas). Image verification decodes on every core and the loader's workers decode
// in parallel, so a handful of such files at once could exhaust memory and get the process killed.
// So each decode first reserves the bytes its header implies (a counting semaphore over bytes) and
// holds them while its full-size pixels live. Rules: a reservation is granted when it fits beside
// those held; one larger than the whole budget is granted once nothing else is held, and then runs
// alone (a legitimately big image is decoded, never refused for the budget's sake); reservations
// are granted in the order they were asked for, so a big one is not starved by a stream of small
// ones. The process's budget is the config key `decode_budget_gb` (GiB, default 1).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace trainer::data {

inline constexpr double kDefaultDecodeBudgetGib = 1.0;

// What a decode reserves per pixel of its header's size: 3 bytes for the BGR result plus up to 4
// for a working image the decoder keeps beside it (the CMYK scan of an Adobe JPEG before its
// conversion, the copy an EXIF turn makes).
inline constexpr int64_t kDecodeBytesPerPixel = 7;

class DecodeBudget {
 public:
  explicit DecodeBudget(int64_t capacity_bytes);
  DecodeBudget(const DecodeBudget&) = delete;
  DecodeBudget& operator=(const DecodeBudget&) = delete;

  // Bytes held until it is destroyed, released or moved from.
  class Grant {
   public:
    Grant() = default;
    Grant(Grant&& other) noexcept;
    Grant& operator=(Grant&& other) noexcept;
    Grant(const Grant&) = delete;
    Grant& operator=(const Grant&) = delete;
    ~Grant() { release(); }
    int64_t bytes() const { return bytes_; }
    void release();

   private:
    friend class DecodeBudget;
    Grant(DecodeBudget* budget, int64_t bytes) : budget_(budget), bytes_(bytes) {}
    DecodeBudget* budget_ = nullptr;
    int64_t bytes_ = 0;
  };

  // Blocks until `bytes` may be held (the rules above); bytes <= 0 returns an empty grant at once.
  // A thread must not ask while it holds a grant of the same budget (it could wait for itself).
  [[nodiscard]] Grant acquire(int64_t bytes);

  // Waiters are checked against the new capacity at once; grants already held stay.
  void set_capacity(int64_t bytes);
  int64_t capacity() const;
  int64_t in_use() const;  // bytes held now
  int waiting() const;     // threads blocked in acquire

 private:
  void release(int64_t bytes);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int64_t capacity_ = 0;
  int64_t in_use_ = 0;
  uint64_t next_ticket_ = 0;  // arrival order
  uint64_t serving_ = 0;      // the ticket that may be granted next
  int waiting_ = 0;
};

// The process's budget: verification, cache building and the loader's workers share it.
// kDefaultDecodeBudgetGib until set_decode_budget_gib.
DecodeBudget& process_decode_budget();
void set_decode_budget_gib(double gib);
int64_t gib_to_bytes(double gib);

// What decoding a width x height image reserves: kDecodeBytesPerPixel per pixel, the pixels capped
// at kMaxImagePixels (the decoders refuse more before allocating). A side <= 0 means the size is
// unknown: unknown_size_reservation_bytes().
int64_t decode_reservation_bytes(int64_t width, int64_t height);
// The largest reservation (kMaxImagePixels' worth, more than any budget below 7 GiB): an image
// whose size is not known before decoding decodes alone.
int64_t unknown_size_reservation_bytes();

// The same for encoded bytes, from their JPEG, PNG, BMP or WebP header; any other format (TIFF:
// its size is known only once decoded) or an unreadable header reserves
// unknown_size_reservation_bytes().
int64_t decode_reservation_bytes(const std::vector<uint8_t>& encoded);

}  // namespace trainer::data
