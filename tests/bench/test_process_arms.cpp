// Fresh-process arms: the child runner, and ABBA over a script standing in for `trainer`.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bench/child_process.h"
#include "bench/interval_report.h"
#include "bench/process_arms.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::bench;
using trainer::test::read_text;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_script(const std::filesystem::path& file, const std::string& body) {
  write_text(file, "#!/bin/sh\n" + body);
  ::chmod(file.c_str(), 0755);
}

// A valid interval result with the given intervals.
std::string interval_text(std::vector<double> intervals, int64_t peak_bytes) {
  engine::IntervalResult r;
  r.intervals_ms = std::move(intervals);
  r.device = "cpu";
  engine::IntervalOptions options;
  options.warmup = 1;
  options.measure = static_cast<int>(r.intervals_ms.size());
  PeakMemory peak{"cpu_peak_rss", "cpu", peak_bytes, true};
  return interval_json(r, nullptr, options, peak, collect_run_record("cpu")).dump();
}

}  // namespace

TEST_CASE("run_child captures stdout and the exit status, and names a program it cannot run") {
  const ChildResult ok = run_child({"/bin/sh", "-c", "printf 'a b\\n'; printf 'log' >&2"});
  CHECK(ok.exit_status == 0);
  CHECK(ok.signal == 0);
  CHECK(ok.stdout_text == "a b\n");
  CHECK(ok.wall_seconds > 0.0);
  CHECK(ok.max_rss_bytes > 0);
  CHECK(run_child({"/bin/sh", "-c", "exit 3"}).exit_status == 3);
  const ChildResult killed = run_child({"/bin/sh", "-c", "kill -9 $$"});
  CHECK(killed.exit_status == -1);
  CHECK(killed.signal == 9);
  CHECK_THROWS_WITH_AS(run_child({"/nonexistent/trainer", "x"}),
                       doctest::Contains("cannot run /nonexistent/trainer"), std::runtime_error);
  CHECK(describe_command({"/a b/t", "x=1", "it's"}) == "'/a b/t' x=1 'it'\\''s'");
  CHECK(self_executable().find("test_bench") != std::string::npos);
}

TEST_CASE("interval arms run as fresh processes, alternate A B and read each child's JSON") {
  TempDir dir;
  write_text(dir / "a.json", interval_text({100, 101, 99}, 5 << 20));  // median 100
  write_text(dir / "b.json", interval_text({80, 79, 81}, 6 << 20));    // median 80
  write_script(dir / "trainer", "echo \"$*\" >> '" + (dir / "log").string() +
                                    "'\n"
                                    "for a in \"$@\"; do case \"$a\" in\n"
                                    "  optimizer_impl=padded) cat '" +
                                    (dir / "b.json").string() +
                                    "'; exit 0;;\n"
                                    "  fail=1) exit 4;;\n"
                                    "  garbage=1) echo not json; exit 0;;\n"
                                    "esac; done\n"
                                    "cat '" +
                                    (dir / "a.json").string() + "'\n");
  ProcessArms arms;
  arms.executable = (dir / "trainer").string();
  arms.global_flags = {"-q"};
  arms.config = "cfg.yaml";
  arms.common = {"imgsz=320"};
  arms.baseline = {"optimizer_impl=scalar"};
  arms.candidate = {"optimizer_impl=padded"};
  CHECK(describe_command(interval_arm_command(arms, Arm::kCandidate, 2, 3, false)) ==
        (dir / "trainer").string() +
            " -q bench interval cfg.yaml imgsz=320 optimizer_impl=padded --warmup 2 --measure 3 "
            "--no-breakdown");

  AbbaOptions options;
  options.pairs = 2;
  options.warmup_arms = 1;
  const AbbaResult r = run_abba(interval_arm_runner(arms, 2, 3, false), options);
  // 1 - 80/100 = 0.2 in both pairs.
  CHECK(r.reduction_summary.median == doctest::Approx(0.2));
  CHECK(r.reduction_summary.min == doctest::Approx(0.2));
  CHECK((r.verdict == Verdict::kAdopt));
  CHECK(r.baseline[0].peak_bytes == (5 << 20));
  CHECK(r.candidate[1].peak_bytes == (6 << 20));
  CHECK(r.candidate[0].detail["arm_command"].get<std::string>().find("optimizer_impl=padded") !=
        std::string::npos);
  const auto calls = lines_of(read_text(dir / "log"));
  REQUIRE(calls.size() == 5);  // warm-up A, then A B A B
  CHECK(calls[0].find("optimizer_impl=scalar") != std::string::npos);
  CHECK(calls[1].find("optimizer_impl=scalar") != std::string::npos);
  CHECK(calls[2].find("optimizer_impl=padded") != std::string::npos);
  CHECK(calls[3].find("optimizer_impl=scalar") != std::string::npos);
  CHECK(calls[4].find("optimizer_impl=padded") != std::string::npos);

  arms.candidate = {"fail=1"};
  CHECK_THROWS_WITH_AS(interval_arm_runner(arms, 2, 3, false)(Arm::kCandidate, 0, false),
                       doctest::Contains("benchmark arm failed (exit status 4)"),
                       std::runtime_error);
  arms.candidate = {"garbage=1"};
  CHECK_THROWS_WITH_AS(interval_arm_runner(arms, 2, 3, false)(Arm::kCandidate, 0, false),
                       doctest::Contains("printed no JSON"), std::runtime_error);
}

TEST_CASE("fit arms are complete runs named per arm, timed from start to exit") {
  TempDir dir;
  write_script(dir / "trainer", "echo \"$*\" >> '" + (dir / "log").string() + "'\n");
  ProcessArms arms;
  arms.executable = (dir / "trainer").string();
  arms.config = "short.yaml";
  arms.baseline = {"ema_impl=scalar"};
  arms.candidate = {"ema_impl=foreach"};
  AbbaOptions options;
  options.pairs = 2;
  options.warmup_arms = 2;
  const AbbaResult r = run_abba(fit_arm_runner(arms, "/tmp/p"), options);
  CHECK(r.baseline.size() == 2);
  CHECK(r.baseline[0].value > 0.0);
  CHECK(r.baseline[0].peak_kind == "child_max_rss");
  CHECK(r.candidate[1].detail["run_name"] == "b1");
  const auto calls = lines_of(read_text(dir / "log"));
  CHECK(calls == std::vector<std::string>{
                     "fit short.yaml ema_impl=scalar project=/tmp/p name=warmup_a0 exist_ok=true",
                     "fit short.yaml ema_impl=foreach project=/tmp/p name=warmup_b0 exist_ok=true",
                     "fit short.yaml ema_impl=scalar project=/tmp/p name=a0 exist_ok=true",
                     "fit short.yaml ema_impl=foreach project=/tmp/p name=b0 exist_ok=true",
                     "fit short.yaml ema_impl=scalar project=/tmp/p name=a1 exist_ok=true",
                     "fit short.yaml ema_impl=foreach project=/tmp/p name=b1 exist_ok=true"});
}
