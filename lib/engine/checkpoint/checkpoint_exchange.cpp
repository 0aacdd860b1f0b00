// See checkpoint_exchange.h. Offers travel as ByteWriter records through all_gather_text; the
// choice is a pure function of the offers, so every rank reaches the same one without a further
// round, and the bytes go out in one broadcast only when some rank lacks them.
#include "engine/checkpoint/checkpoint_exchange.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/byte_stream.h"
#include "core/error.h"
#include "distributed/group.h"

namespace trainer::engine {
namespace {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "unknown-host";
  return host;
}

// This rank's file, checked: its bytes and parsed checkpoint when usable, else the offer's `why`.
struct Local {
  CheckpointOffer offer;
  std::vector<char> bytes;
  std::optional<Checkpoint> checkpoint;
};

Local read_local(const std::filesystem::path& file, const CheckpointWanted& wanted) {
  Local local;
  local.offer.where = fmt::format("{}:{}", host_name(), std::filesystem::absolute(file).string());
  std::error_code ec;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec)) {
    local.offer.why = "no such file";
    return local;
  }
  std::ifstream in(file, std::ios::binary);
  local.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  try {
    local.checkpoint = parse_checkpoint(local.bytes, file.string());
  } catch (const std::exception& e) {
    local.offer.why = e.what();
    return local;
  }
  const Checkpoint& c = *local.checkpoint;
  if (!wanted.run_id.empty() && c.run_id != wanted.run_id) {
    local.offer.why = fmt::format("another run's (run id '{}', not '{}')", c.run_id, wanted.run_id);
  } else if (wanted.epoch >= 0 && c.epoch != wanted.epoch) {
    local.offer.why = fmt::format("holds epoch {}, not epoch {}", c.epoch + 1, wanted.epoch + 1);
  } else {
    local.offer.epoch = c.epoch;
    local.offer.checksum = checkpoint_checksum(local.bytes);
    return local;
  }
  local.checkpoint.reset();
  return local;
}

std::string encode(const CheckpointOffer& o) {
  core::ByteWriter w;
  w.pod(o.epoch);
  w.pod(o.checksum);
  w.str(o.where);
  w.str(o.why);
  return w.take();
}

CheckpointOffer decode(const std::string& bytes) {
  core::ByteReader r(bytes);
  CheckpointOffer o;
  o.epoch = r.pod<int64_t>();
  o.checksum = r.pod<uint64_t>();
  o.where = r.str();
  o.why = r.str();
  return o;
}

}  // namespace

uint64_t checkpoint_checksum(const std::vector<char>& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string AgreedCheckpoint::describe_offers() const {
  std::vector<std::string> parts;
  for (size_t r = 0; r < offers.size(); ++r) {
    const auto& o = offers[r];
    parts.push_back(fmt::format("rank {} ({}): {}", r, o.where,
                                o.epoch >= 0 ? fmt::format("epoch {}", o.epoch + 1) : o.why));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

AgreedCheckpoint agree_on_checkpoint(distributed::Group* group, const std::filesystem::path& file,
                                     const CheckpointWanted& wanted) {
  Local local = read_local(file, wanted);
  AgreedCheckpoint agreed;
  if (group == nullptr) {
    agreed.offers = {local.offer};
    if (local.offer.epoch < 0) return agreed;
    agreed.holder = 0;
    agreed.where = local.offer.where;
    agreed.checkpoint = std::move(local.checkpoint);
    return agreed;
  }
  for (const auto& text : group->all_gather_text(encode(local.offer))) {
    agreed.offers.push_back(decode(text));
  }
  for (size_t r = 0; r < agreed.offers.size(); ++r) {
    const auto epoch = agreed.offers[r].epoch;
    if (epoch >= 0 && (agreed.holder < 0 || epoch > agreed.offers[agreed.holder].epoch)) {
      agreed.holder = static_cast<int>(r);
    }
  }
  if (agreed.holder < 0) return agreed;
  const CheckpointOffer& chosen = agreed.offers[static_cast<size_t>(agreed.holder)];
  agreed.where = chosen.where;
  for (size_t r = 0; r < agreed.offers.size(); ++r) {
    const auto& o = agreed.offers[r];
    if (o.epoch != chosen.epoch || o.checksum != chosen.checksum) {
      agreed.sent_to.push_back(static_cast<int>(r));
    }
  }
  const bool receive = std::find(agreed.sent_to.begin(), agreed.sent_to.end(), group->rank()) !=
                       agreed.sent_to.end();
  if (!agreed.sent_to.empty()) {
    const std::string sent = group->broadcast_text(
        group->rank() == agreed.holder ? std::string(local.bytes.begin(), local.bytes.end())
                                       : std::string(),
        agreed.holder);
    if (receive) {
      const std::vector<char> bytes(sent.begin(), sent.end());
      if (checkpoint_checksum(bytes) != chosen.checksum) {
        throw core::InputError(fmt::format(
            "rank {}: the checkpoint received from rank {} ({}) does not have the checksum it "
            "announced",
            group->rank(), agreed.holder, chosen.where));
      }
      agreed.checkpoint =
          parse_checkpoint(bytes, fmt::format("{} (sent by rank {})", chosen.where, agreed.holder));
    }
  }
  if (!receive) agreed.checkpoint = std::move(local.checkpoint);
  if (!agreed.sent_to.empty() && group->rank() == 0) {
    spdlog::info("checkpoint of epoch {} from rank {} ({}) sent to rank(s) {}", chosen.epoch + 1,
                 agreed.holder, chosen.where, fmt::join(agreed.sent_to, ", "));
  }
  return agreed;
}

}  // namespace trainer::engine
