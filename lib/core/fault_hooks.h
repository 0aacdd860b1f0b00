// Fault-injection hooks for the fault scripts and tests, off unless explicitly switched on.
//
// Why: a kill at an exact point (after a given file is renamed into place) or a non-finite loss at
// an exact batch is how the kill and data-parallel tests prove that nothing is lost. A variable
// such as TRAINER_FAULT_NON_FINITE left in a user's environment must never change a real run, so
// every hook also needs the test switch TRAINER_TEST_HOOKS=1; without it a set hook variable is
// ignored with a warning.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace trainer::core {

// The switch every hook needs: TRAINER_TEST_HOOKS=1.
inline constexpr const char* kTestHooksSwitch = "TRAINER_TEST_HOOKS";

// The value of the hook variable `name` when the test switch is on; nullopt when the variable is
// unset, or set without the switch (then a warning says it is ignored, once per name).
std::optional<std::string> fault_setting(const char* name);

// TRAINER_FAULT_EXIT_AFTER=FILE:N (a file name, no folder, and a 1-based count): the process exits
// at once with status 137 (as SIGKILL) right after the N-th rename of a file named FILE into place
// by write_file_atomically. Called by it after each rename.
void exit_if_fault_after_rename(const std::filesystem::path& target);

}  // namespace trainer::core
