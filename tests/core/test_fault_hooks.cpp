// Fault hooks act only with the test switch, and the exit-after-rename hook exits right after the
// N-th rename of the named file, with the file complete.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "core/fault_hooks.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("a fault variable without the test switch is ignored") {
  ::setenv("TRAINER_FAULT_EXAMPLE", "1:2:3", 1);
  ::unsetenv(core::kTestHooksSwitch);
  CHECK_FALSE(core::fault_setting("TRAINER_FAULT_EXAMPLE").has_value());
  ::setenv(core::kTestHooksSwitch, "yes", 1);  // only "1" switches it on
  CHECK_FALSE(core::fault_setting("TRAINER_FAULT_EXAMPLE").has_value());
  ::setenv(core::kTestHooksSwitch, "1", 1);
  CHECK(core::fault_setting("TRAINER_FAULT_EXAMPLE") == std::optional<std::string>("1:2:3"));
  ::unsetenv("TRAINER_FAULT_EXAMPLE");
  CHECK_FALSE(core::fault_setting("TRAINER_FAULT_EXAMPLE").has_value());
  ::unsetenv(core::kTestHooksSwitch);
}

namespace {

// Runs three writes of `name` in a child with the hook set to `spec` (and the switch as given);
// returns the child's exit status and leaves the file as the child left it.
int write_three_times(const std::filesystem::path& file, const char* spec, bool with_switch) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::setenv("TRAINER_FAULT_EXIT_AFTER", spec, 1);
    if (with_switch) {
      ::setenv(core::kTestHooksSwitch, "1", 1);
    } else {
      ::unsetenv(core::kTestHooksSwitch);
    }
    for (int k = 1; k <= 3; ++k) core::write_file_atomically(file, "version " + std::to_string(k));
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("TRAINER_FAULT_EXIT_AFTER=FILE:N exits with 137 right after the N-th rename") {
  test::TempDir dir;
  const auto file = dir / "last.ckpt";
  CHECK(write_three_times(file, "last.ckpt:2", true) == 137);
  CHECK(test::read_text(file) == "version 2");
  CHECK(write_three_times(file, "other.ckpt:1", true) == 0);
  CHECK(test::read_text(file) == "version 3");
  CHECK(write_three_times(file, "last.ckpt:1", false) == 0);  // no switch: no fault
  CHECK(test::read_text(file) == "version 3");
}
