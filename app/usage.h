// Usage errors: a subcommand given too little, or arguments it cannot parse. One error type and one
// printer for all of them (ours and CLI11's parse errors), so every subcommand says what it needs,
// shows its usage line and exits with the same status, the README's 2.
//
// Why: a new user's first mistakes are usage mistakes; they should read one short message in our
// style, not a configuration table, an empty path or CLI11's own text and exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainer::app {

// The exit status of a usage error, the same as a configuration error's.
inline constexpr int kUsageExitStatus = 2;

struct Usage {
  std::string command;                // "trainer fit"
  std::string synopsis;               // "trainer fit [CONFIG] [key=value ...]"
  std::vector<std::string> examples;  // command lines (and a note after them) that work
};

class UsageError : public std::runtime_error {
 public:
  UsageError(const std::string& problem, Usage usage);
  const Usage& usage() const { return usage_; }

 private:
  Usage usage_;
};

// "error: PROBLEM", "usage: SYNOPSIS", the examples, and where the options are listed.
std::string usage_message(const UsageError& error);

// A CLI11 parse error (an argument not expected, a required one missing, a value refused) as a
// usage error of the subcommand it happened in, with that subcommand's usage line.
UsageError usage_error_from_parse(const CLI::App& root, const CLI::ParseError& error);

// Checked before parsing: the first word after a command that takes subcommands (`trainer`,
// `trainer bench`, `trainer data`) that is none of them, as "trainer bench: unknown subcommand
// 'nothing' (one of: abba, data, ...)". CLI11 alone says "a subcommand is required" or "argument
// not expected" without naming the word the user typed.
std::optional<UsageError> unknown_subcommand(const CLI::App& root,
                                             const std::vector<std::string>& args);

}  // namespace trainer::app
