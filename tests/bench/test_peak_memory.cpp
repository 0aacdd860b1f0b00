// Peak memory on CPU: the RSS high-water mark rises by what we touch and resets between arms.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>

#include "bench/peak_memory.h"

using namespace trainer::bench;

TEST_CASE("CPU peak RSS covers a 64 MiB buffer touched inside the window") {
  const bool reset = reset_peak_memory("cpu");
  const int64_t before = process_rss_bytes();
  REQUIRE(before > 0);
  constexpr size_t kBytes = 64u << 20;
  {
    auto buffer = std::make_unique<char[]>(kBytes);
    std::memset(buffer.get(), 1, kBytes);  // touch every page so it becomes resident
    CHECK(buffer[kBytes - 1] == 1);
  }
  const PeakMemory peak = read_peak_memory("cpu");
  CHECK(peak.kind == "cpu_peak_rss");
  CHECK(peak.device == "cpu");
  CHECK(peak.since_reset == reset);
  CHECK(peak.bytes >= before + static_cast<int64_t>(kBytes) - (4 << 20));
  if (reset) {
    // After a reset the high-water mark starts again from the current RSS (the buffer is freed).
    reset_peak_memory("cpu");
    CHECK(read_peak_memory("cpu").bytes < peak.bytes);
  }
  CHECK(to_mib(3 * 1024 * 1024 / 2) == doctest::Approx(1.5));
}
