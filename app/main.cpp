// `trainer`: the command-line entry point. Parses flags, sets up logging, dispatches a subcommand,
// and turns errors into a one-line message (usage errors: with the usage) and a non-zero exit code:
// 2 for usage, configuration and input errors (`trainer` alone is a usage error), 1 for anything
// else.
#include <spdlog/spdlog.h>

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/usage.h"
#include "core/dist_env.h"
#include "core/error.h"
#include "core/library_logs.h"
#include "core/logging.h"

namespace {

// The rank this process runs as under torchrun or trainer's own launcher (0 otherwise, or when
// the variables are malformed: `trainer fit` reports those itself).
int launched_rank() {
  try {
    return trainer::core::read_dist_env().rank;
  } catch (const std::exception&) {
    return 0;
  }
}

// A filesystem error as one line a user can act on: what failed, on which path, why, and which
// part of the path is a file where a folder is needed. Returns the exit status: 1 where the machine
// is the cause (a full or read-only disk, an I/O error), 2 where the path given is.
int report_filesystem_error(const std::filesystem::filesystem_error& e) {
  namespace fs = std::filesystem;
  std::string what = e.what();
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
  const std::string reason = e.code().message();
  if (const size_t at = what.find(": " + reason); at != std::string::npos) what.erase(at);
  std::string paths = e.path1().string();
  if (!e.path2().empty()) paths += " -> " + e.path2().string();
  std::string hint;
  std::error_code ec;
  // The path itself counts when a folder was to be made there (ENOTDIR, EEXIST: project=afile).
  const bool made_here = e.code().value() == ENOTDIR || e.code().value() == EEXIST;
  for (fs::path p = e.path1(); !p.empty() && p != p.parent_path(); p = p.parent_path()) {
    if (fs::exists(p, ec) && !fs::is_directory(p, ec) && (p != e.path1() || made_here)) {
      hint = " (" + p.string() + " is a file, not a folder)";
      break;
    }
  }
  spdlog::error("error: {} {}: {}{}", what, paths, reason, hint);
  const int err = e.code().value();
  return err == ENOSPC || err == EIO || err == EROFS || err == EDQUOT || err == ENOMEM ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  CLI::App cli{"trainer: train YOLO detectors natively (LibTorch)", "trainer"};
  cli.require_subcommand(0, 1);
  cli.fallthrough();  // -v/-q after the subcommand too (`trainer fit -q ...`), as people type them
  app::GlobalOptions global;
  bool show_version = false;
  cli.add_flag("--version", show_version, "print versions of trainer, LibTorch, CUDA, OpenCV");
  cli.add_flag("-v,--verbose", global.verbose, "debug output");
  cli.add_flag("-q,--quiet", global.quiet, "warnings and errors only");

  const std::vector<app::Command> commands = {
      app::register_fit_command(cli, global),     app::register_val_command(cli, global),
      app::register_predict_command(cli, global), app::register_config_command(cli, global),
      app::register_info_command(cli, global),    app::register_data_command(cli, global),
      app::register_eval_command(cli, global),    app::register_bench_command(cli, global),
      app::register_synth_command(cli, global),
  };

  if (const auto unknown =
          app::unknown_subcommand(cli, std::vector<std::string>(argv + 1, argv + argc))) {
    core::init_console_logging(core::Verbosity::kNormal, launched_rank());
    spdlog::error("{}", app::usage_message(*unknown));
    return app::kUsageExitStatus;
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help (and CLI11's other "success" exits) print and exit 0; anything else is a usage error.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return cli.exit(e);
    core::init_console_logging(core::Verbosity::kNormal, launched_rank());
    spdlog::error("{}", app::usage_message(app::usage_error_from_parse(cli, e)));
    return app::kUsageExitStatus;
  }
  core::init_console_logging(global.quiet     ? core::Verbosity::kQuiet
                             : global.verbose ? core::Verbosity::kVerbose
                                              : core::Verbosity::kNormal,
                             launched_rank());
  core::set_library_log_levels(global.verbose);
  try {
    if (show_version) {
      app::print_version_report();
      return 0;
    }
    for (const auto& command : commands) {
      if (command.cli->parsed()) return command.run();
    }
    // No subcommand: a usage error, like any command given too little.
    spdlog::error("error: trainer needs a subcommand (fit, val, predict, ...)");
    std::cerr << cli.help();
    return app::kUsageExitStatus;
  } catch (const app::UsageError& e) {
    spdlog::error("{}", app::usage_message(e));
    return app::kUsageExitStatus;
  } catch (const core::ConfigError& e) {
    spdlog::error("error: {}", e.what());
    return 2;
  } catch (const core::InputError& e) {
    spdlog::error("error: {}", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    return report_filesystem_error(e);
  } catch (const std::exception& e) {
    spdlog::error("error: {}", e.what());
    return 1;
  }
}
