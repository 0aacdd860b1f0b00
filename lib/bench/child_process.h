// Runs one benchmark arm as a fresh child process and times it from start to exit.
//
// Why: ABBA arms must not share a process (allocator caches, autotuning, warmed thread pools would
// leak from one arm into the next), and the short fit is timed from process start to exit. The
// child is this very binary (/proc/self/exe) with other arguments, or any program for tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainer::bench {

struct ChildResult {
  int exit_status = -1;       // the exit code, or -1 when the child was killed by a signal
  int signal = 0;             // the signal that ended it (0 = none)
  std::string stdout_text;    // everything the child wrote to stdout
  double wall_seconds = 0;    // from just before fork to just after the child was reaped
  int64_t max_rss_bytes = 0;  // the child's peak resident set size (getrusage of the child)
};

// Runs argv[0] (a path; not searched in PATH) with argv. stdout is captured; stderr goes to this
// process's stderr (the child's logs stay visible). Throws std::runtime_error when the program
// cannot be started (the message names it).
ChildResult run_child(const std::vector<std::string>& argv);

// The path of the running executable (/proc/self/exe).
std::string self_executable();

// argv joined with spaces and quoted where needed, for logs and the record.
std::string describe_command(const std::vector<std::string>& argv);

}  // namespace trainer::bench
