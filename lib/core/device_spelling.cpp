// See device_spelling.h.
#include "core/device_spelling.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/ascii_case.h"
#include "core/error.h"

namespace trainer::core {

DeviceSpelling parse_device(const std::string& text) {
  const std::string s = ascii_lowercase(text);
  DeviceSpelling out;
  if (s.empty()) return out;
  if (s == "cpu") {
    out.kind = DeviceSpelling::Kind::kCpu;
    return out;
  }
  std::string index = s;
  if (s == "cuda") {
    index = "0";
  } else if (s.rfind("cuda:", 0) == 0) {
    index = s.substr(5);
  }
  const bool digits =
      !index.empty() && index.size() <= 4 &&
      std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!digits) {
    throw ConfigError("device: \"" + text +
                      "\" is not one device (use cpu, 0, 1, cuda, cuda:0 ...; `trainer fit` also "
                      "trains on several: device=0,1,2,3)");
  }
  out.kind = DeviceSpelling::Kind::kCuda;
  out.index = std::stoi(index);
  return out;
}

std::vector<std::string> split_device_list(const std::string& text) {
  if (text.find(',') == std::string::npos) {
    parse_device(text);
    return {text};
  }
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string entry; std::getline(in, entry, ',');) {
    const auto b = entry.find_first_not_of(' ');
    entry = b == std::string::npos ? "" : entry.substr(b, entry.find_last_not_of(' ') - b + 1);
    if (entry.empty()) {
      throw ConfigError("device: \"" + text + "\" has an empty entry (use 0,1,2 ...)");
    }
    parse_device(entry);
    out.push_back(entry);
  }
  if (text.back() == ',') {
    throw ConfigError("device: \"" + text + "\" has an empty entry (use 0,1,2 ...)");
  }
  return out;
}

std::string device_for_rank(const std::string& text, int local_rank, int local_world_size) {
  const auto list = split_device_list(text);
  if (list.size() > 1) {
    if (static_cast<int>(list.size()) != local_world_size) {
      throw ConfigError("device: " + text + " lists " + std::to_string(list.size()) +
                        " devices, but this machine runs " + std::to_string(local_world_size) +
                        " ranks (LOCAL_WORLD_SIZE): give one device per rank");
    }
    return list[static_cast<size_t>(local_rank)];
  }
  const DeviceSpelling one = parse_device(text);
  if (local_world_size <= 1 || one.kind == DeviceSpelling::Kind::kCpu) return text;
  if (one.kind == DeviceSpelling::Kind::kAuto) return "";  // engine: cuda:LOCAL_RANK when a GPU
  std::string lower;
  for (char ch : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "cuda") return "cuda:" + std::to_string(local_rank);
  throw ConfigError("device: " + text + " names one GPU, but this machine runs " +
                    std::to_string(local_world_size) +
                    " ranks: list one per rank (device=0,1,...) or leave device empty");
}

}  // namespace trainer::core
