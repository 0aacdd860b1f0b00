// See device_spelling.h.
#include "core/device_spelling.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace trainer::core {

DeviceSpelling parse_device(const std::string& text) {
  std::string s;
  for (char ch : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
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
                      "\" is not a device (use cpu, 0, 1, cuda, cuda:0 ...; one device per "
                      "process, several GPUs through torchrun)");
  }
  out.kind = DeviceSpelling::Kind::kCuda;
  out.index = std::stoi(index);
  return out;
}

}  // namespace trainer::core
