// See usage.h.
#include "app/usage.h"

#include <cctype>
#include <sstream>
#include <utility>

namespace trainer::app {

UsageError::UsageError(const std::string& problem, Usage usage)
    : std::runtime_error(problem), usage_(std::move(usage)) {}

std::string usage_message(const UsageError& error) {
  const Usage& u = error.usage();
  std::string text = "error: " + std::string(error.what()) + "\nusage: " + u.synopsis + "\n";
  for (size_t i = 0; i < u.examples.size(); ++i) {
    text += (i == 0 ? "  e.g. " : "       ") + u.examples[i] + "\n";
  }
  text += "`" + u.command + " --help` lists the arguments and options";
  if (u.command == "trainer fit" || u.command == "trainer val") {
    text += ", `trainer config --keys` every key";
  }
  return text;
}

UsageError usage_error_from_parse(const CLI::App& root, const CLI::ParseError& error) {
  // The subcommand the error happened in: the deepest one selected so far.
  Usage usage;
  usage.command = root.get_name();
  for (const CLI::App* app = &root; !app->get_subcommands().empty();) {
    app = app->get_subcommands().front();
    usage.command += " " + app->get_name();
  }
  // Its usage line, as CLI11 writes it in the help ("Usage: trainer predict [OPTIONS] args...").
  std::istringstream help(root.help());
  for (std::string line; std::getline(help, line);) {
    if (line.rfind("Usage: ", 0) == 0) {
      usage.synopsis = line.substr(7);
      break;
    }
  }
  if (usage.synopsis.empty()) usage.synopsis = usage.command + " ...";
  std::string problem = error.what();
  // "The following argument ...", "A subcommand ..." in our lower-case style; "GT_JSON" stays.
  const auto is_lower = [&](size_t i) {
    return i < problem.size() && std::islower(static_cast<unsigned char>(problem[i]));
  };
  const bool word = is_lower(1) || (problem.size() > 1 && problem[1] == ' ');
  if (!problem.empty() && std::isupper(static_cast<unsigned char>(problem[0])) && word) {
    problem[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(problem[0])));
  }
  const std::string message = usage.command + ": " + problem;
  return UsageError(message, std::move(usage));
}

std::optional<UsageError> unknown_subcommand(const CLI::App& root,
                                             const std::vector<std::string>& args) {
  const CLI::App* app = &root;
  std::string command = root.get_name();
  for (const std::string& word : args) {
    if (word.empty() || word[0] == '-') continue;  // the global flags take no value
    const auto subcommands = app->get_subcommands([](const CLI::App*) { return true; });
    if (subcommands.empty()) return std::nullopt;
    const CLI::App* next = nullptr;
    std::string names;
    for (const CLI::App* sub : subcommands) {
      if (sub->check_name(word)) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) {
      Usage usage;
      usage.command = command;
      usage.synopsis = command + " SUBCOMMAND ...";
      return UsageError(command + ": unknown subcommand '" + word + "' (one of: " + names + ")",
                        std::move(usage));
    }
    app = next;
    command += " " + next->get_name();
  }
  return std::nullopt;
}

}  // namespace trainer::app
