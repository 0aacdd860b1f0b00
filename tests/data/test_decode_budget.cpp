// The decode budget: its semaphore rules with threads and hand numbers, what a decode reserves per
// format, and verification and the loader's decode of huge-header PNGs in a child process whose
// address space is limited (each decoded alone instead of failing for memory).
#include <doctest/doctest.h>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "data/decode_budget.h"
#include "data/image_codec.h"
#include "data/image_io.h"
#include "data/image_verify.h"
#include "data_test_util.h"
#include "png_bytes.h"

using trainer::data::DecodeBudget;
using trainer::test::TempDir;

namespace {

// Spins until `budget` has `n` threads blocked in acquire (a few seconds at most).
void wait_for_waiters(const DecodeBudget& budget, int n) {
  for (int i = 0; i < 5000 && budget.waiting() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(budget.waiting() == n);
}

// A thread that acquires `bytes`, reports what the budget held once granted, and holds the grant
// until told to release it.
class Holder {
 public:
  Holder(DecodeBudget& budget, int64_t bytes)
      : thread_([this, &budget, bytes] {
          DecodeBudget::Grant grant = budget.acquire(bytes);
          granted_in_use_.set_value(budget.in_use());
          release_future_.wait();
        }) {}
  ~Holder() {
    if (thread_.joinable()) join();
  }
  bool granted() const {
    return granted_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  int64_t in_use_when_granted() const { return granted_.get(); }
  void join() {
    if (!released_) release_.set_value();
    released_ = true;
    thread_.join();
  }

 private:
  // Both futures are taken before the thread starts (declared before it).
  std::promise<int64_t> granted_in_use_;
  std::shared_future<int64_t> granted_ = granted_in_use_.get_future().share();
  std::promise<void> release_;
  std::future<void> release_future_ = release_.get_future();
  bool released_ = false;
  std::thread thread_;
};

std::string le16(uint32_t v) {
  return {static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF)};
}
std::string le32(uint32_t v) {
  return le16(v & 0xFFFF) + le16(v >> 16);
}
std::vector<uint8_t> bytes_of(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

int64_t vm_size_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

// Runs `body` in a child process whose address space may grow by `headroom` bytes beyond its size
// at the start; returns its exit status (body's result), or 128 + the signal that ended it.
int run_with_address_headroom(int64_t headroom, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // New threads share the main malloc arena: each of their own would reserve 64 MiB of address
    // space, which the limit would count.
    mallopt(M_ARENA_MAX, 1);
    const rlim_t limit = static_cast<rlim_t>(vm_size_bytes() + headroom);
    const rlimit r{limit, limit};
    if (setrlimit(RLIMIT_AS, &r) != 0) ::_exit(90);
    int code = 91;
    try {
      code = body();
    } catch (...) {
      code = 92;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

constexpr int kHugeFiles = 4;
constexpr uint32_t kHugeSide = 16384;  // 16384^2 x 3 bytes = 768 MiB decoded
// The child may grow by 1.25 GiB: one huge image (768 MiB) and four thread stacks fit, two images
// at once do not.
constexpr int64_t kHeadroom = int64_t{5} << 28;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressLimitWorks = false;  // ASan reserves terabytes of shadow memory up front
#else
constexpr bool kAddressLimitWorks = true;
#endif

std::vector<std::filesystem::path> write_huge_pngs(const TempDir& dir) {
  std::vector<std::filesystem::path> files;
  const std::string png = trainer::test::huge_header_png(kHugeSide, kHugeSide);
  for (int i = 0; i < kHugeFiles; ++i) {
    files.push_back(dir / ("huge" + std::to_string(i) + ".png"));
    trainer::test::write_text(files.back(), png);
  }
  return files;
}

}  // namespace

TEST_CASE("decode budget: reservations that fit are granted together") {
  DecodeBudget budget(100);
  DecodeBudget::Grant a = budget.acquire(40);
  DecodeBudget::Grant b = budget.acquire(60);  // 40 + 60 = 100: fits exactly, no wait
  CHECK(budget.in_use() == 100);
  CHECK(a.bytes() == 40);
  a.release();
  CHECK(budget.in_use() == 60);
  a.release();  // twice: nothing more
  CHECK(budget.in_use() == 60);
  DecodeBudget::Grant moved = std::move(b);
  CHECK(b.bytes() == 0);
  b.release();  // the moved-from grant releases nothing
  CHECK(budget.in_use() == 60);
  { DecodeBudget::Grant gone = std::move(moved); }
  CHECK(budget.in_use() == 0);
  CHECK(budget.acquire(0).bytes() == 0);  // nothing to reserve: never waits
  CHECK(budget.acquire(-5).bytes() == 0);
}

TEST_CASE("decode budget: a reservation that does not fit waits for a release") {
  DecodeBudget budget(100);
  DecodeBudget::Grant held = budget.acquire(60);
  Holder waiter(budget, 50);  // 60 + 50 = 110 > 100
  wait_for_waiters(budget, 1);
  CHECK_FALSE(waiter.granted());
  CHECK(budget.in_use() == 60);
  held.release();
  CHECK(waiter.in_use_when_granted() == 50);
  waiter.join();
  CHECK(budget.in_use() == 0);
}

TEST_CASE("decode budget: more than the whole budget is granted alone, once nothing is held") {
  DecodeBudget budget(100);
  DecodeBudget::Grant small = budget.acquire(10);
  Holder big(budget, 250);
  wait_for_waiters(budget, 1);
  CHECK_FALSE(big.granted());  // 10 held: the big one waits for it
  small.release();
  CHECK(big.in_use_when_granted() == 250);
  Holder after(budget, 1);  // nothing fits beside the big one
  wait_for_waiters(budget, 1);
  CHECK_FALSE(after.granted());
  CHECK(budget.in_use() == 250);
  big.join();
  CHECK(after.in_use_when_granted() == 1);
}

TEST_CASE("decode budget: first come, first served (a small one does not overtake a big one)") {
  DecodeBudget budget(100);
  DecodeBudget::Grant held = budget.acquire(60);
  Holder first(budget, 50);
  wait_for_waiters(budget, 1);
  Holder second(budget, 30);  // 60 + 30 would fit, but 50 asked first
  wait_for_waiters(budget, 2);
  CHECK_FALSE(second.granted());
  held.release();
  // Both fit now (50 + 30 = 80), the second granted after the first.
  const int64_t first_saw = first.in_use_when_granted();
  CHECK((first_saw == 50 || first_saw == 80));
  CHECK(second.in_use_when_granted() == 80);
  CHECK(budget.in_use() == 80);
}

TEST_CASE("decode budget: a larger capacity lets waiters in, a smaller one keeps what is held") {
  DecodeBudget budget(100);
  DecodeBudget::Grant held = budget.acquire(80);
  Holder waiter(budget, 50);
  wait_for_waiters(budget, 1);
  budget.set_capacity(130);  // 80 + 50 = 130 fits now
  CHECK(waiter.in_use_when_granted() == 130);
  budget.set_capacity(10);
  CHECK(budget.in_use() == 130);
  CHECK(budget.capacity() == 10);
}

TEST_CASE("decode budget: 8 threads never hold more than the capacity together") {
  DecodeBudget budget(100);
  std::atomic<int64_t> held{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const int64_t bytes = (t * 31 + i * 37) % 90 + 1;  // 1..90
        const DecodeBudget::Grant grant = budget.acquire(bytes);
        const int64_t now = held += bytes;
        int64_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        held -= bytes;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(most.load() <= 100);
  CHECK(budget.in_use() == 0);
}

TEST_CASE("decode budget: GiB to bytes, and the process's budget is 1 GiB until set") {
  CHECK(trainer::data::gib_to_bytes(1.0) == 1073741824);
  CHECK(trainer::data::gib_to_bytes(0.5) == 536870912);
  DecodeBudget& process = trainer::data::process_decode_budget();
  CHECK(process.capacity() == 1073741824);
  trainer::data::set_decode_budget_gib(2.5);
  CHECK(process.capacity() == 2684354560);
  trainer::data::set_decode_budget_gib(trainer::data::kDefaultDecodeBudgetGib);
  CHECK(process.capacity() == 1073741824);
}

TEST_CASE("decode reservation: 7 bytes a pixel from the header, the most for an unknown size") {
  using trainer::data::decode_reservation_bytes;
  CHECK(decode_reservation_bytes(640, 480) == 2150400);                  // 640 * 480 * 7
  CHECK(decode_reservation_bytes(16384, 16384) == 1879048192);           // 2^28 * 7
  CHECK(trainer::data::unknown_size_reservation_bytes() == 7516192768);  // 2^30 * 7
  CHECK(decode_reservation_bytes(100000, 100000) == 7516192768);         // capped at 2^30 pixels
  CHECK(decode_reservation_bytes(0, 480) == 7516192768);
  CHECK(decode_reservation_bytes(-3, -4) == 7516192768);

  // PNG and JPEG headers.
  CHECK(decode_reservation_bytes(bytes_of(trainer::test::huge_header_png(16384, 16384))) ==
        1879048192);
  std::vector<uint8_t> jpeg;
  TempDir dir;
  trainer::test::write_image(dir / "a.jpg", trainer::test::pattern_image(20, 30));
  REQUIRE(trainer::data::read_file_bytes(dir / "a.jpg", &jpeg));
  CHECK(decode_reservation_bytes(jpeg) == 4200);  // 30 * 20 * 7
  // 37 x 23 = 851 pixels: 5957 bytes, from a BMP info header (rows top-down: height -23), an old
  // core header, and WebP's lossy, lossless and extended headers.
  const std::string bmp =
      "BM" + le32(0) + le32(0) + le32(54) + le32(40) + le32(37) + le32(static_cast<uint32_t>(-23));
  CHECK(decode_reservation_bytes(bytes_of(bmp)) == 5957);
  const std::string bmp_core =
      "BM" + le32(0) + le32(0) + le32(26) + le32(12) + le16(37) + le16(23) + le16(1) + le16(24);
  CHECK(decode_reservation_bytes(bytes_of(bmp_core)) == 5957);
  const std::string riff = "RIFF" + le32(100) + "WEBP";
  const std::string vp8 =
      riff + "VP8 " + le32(80) + std::string(3, '\0') + "\x9d\x01\x2a" + le16(37) + le16(23);
  CHECK(decode_reservation_bytes(bytes_of(vp8)) == 5957);
  const std::string vp8l = riff + "VP8L" + le32(80) + "\x2f" + le32(36 | (22 << 14)) + "pad..";
  CHECK(decode_reservation_bytes(bytes_of(vp8l)) == 5957);
  const std::string vp8x = riff + "VP8X" + le32(10) + le32(0) + le16(36) + std::string(1, '\0') +
                           le16(22) + std::string(1, '\0');
  CHECK(decode_reservation_bytes(bytes_of(vp8x)) == 5957);
  // Anything else decodes alone: TIFF, text, a PNG cut inside its header, nothing.
  CHECK(decode_reservation_bytes(bytes_of("II*\0" + std::string(40, '\0'))) == 7516192768);
  CHECK(decode_reservation_bytes(bytes_of("hello, world")) == 7516192768);
  CHECK(decode_reservation_bytes(bytes_of(trainer::test::huge_header_png(8, 8).substr(0, 20))) ==
        7516192768);
  CHECK(decode_reservation_bytes(std::vector<uint8_t>()) == 7516192768);
}

TEST_CASE("decode budget: verifying 4 huge-header PNGs on 4 threads in 1.25 GiB: one at a time") {
  if (!kAddressLimitWorks) {
    MESSAGE("not run: an address-space limit cannot work under ASan");
    return;
  }
  TempDir dir;
  const std::vector<std::filesystem::path> files = write_huge_pngs(dir);
  // What one file alone comes to (the decoder allocates 768 MiB, then finds the rows missing).
  const std::string alone = trainer::data::verify_image(files[0]).error;
  REQUIRE_FALSE(alone.empty());
  CHECK(alone.find("alloc") == std::string::npos);
  const int status = run_with_address_headroom(kHeadroom, [&] {
    trainer::data::set_decode_budget_gib(1.0);
    const auto verdicts = trainer::data::verify_images(files, kHugeFiles);
    int same = 0;
    for (const auto& v : verdicts) {
      same += v.error == alone ? 1 : 0;
      if (v.error != alone) std::fprintf(stderr, "verdict: %s\n", v.error.c_str());
    }
    return same == kHugeFiles ? 0 : 1;
  });
  CHECK(status == 0);
}

TEST_CASE("decode budget: the loader's decode of 4 huge-header PNGs at once in 1.25 GiB") {
  if (!kAddressLimitWorks) {
    MESSAGE("not run: an address-space limit cannot work under ASan");
    return;
  }
  TempDir dir;
  const std::vector<std::filesystem::path> files = write_huge_pngs(dir);
  auto error_of = [](const std::filesystem::path& file) {
    try {
      trainer::data::read_resized_bgr(file, 640);
    } catch (const trainer::core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("decoded");
  };
  const std::string alone = error_of(files[0]);
  REQUIRE(alone.find("cannot decode image") != std::string::npos);
  const int status = run_with_address_headroom(kHeadroom, [&] {
    trainer::data::set_decode_budget_gib(1.0);
    std::vector<std::string> errors(files.size());
    std::vector<std::thread> workers;
    for (size_t i = 0; i < files.size(); ++i) {
      workers.emplace_back([&, i] {
        try {
          errors[i] = error_of(files[i]);
        } catch (const std::exception& e) {  // e.g. std::bad_alloc
          errors[i] = e.what();
        }
      });
    }
    for (auto& w : workers) w.join();
    int same = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      // Each file's own name is in its message.
      std::string expected = alone;
      expected.replace(0, files[0].string().size(), files[i].string());
      same += errors[i] == expected ? 1 : 0;
      if (errors[i] != expected) std::fprintf(stderr, "error: %s\n", errors[i].c_str());
    }
    return same == kHugeFiles ? 0 : 1;
  });
  CHECK(status == 0);
}
