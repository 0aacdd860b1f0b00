// Hostile weights files: each is a file the project's writer made with one place changed (a
// storage record, a view, a storage type, a length, a decoy record), and each is refused with the
// file and the problem named before anything allocates or reads what it declares. The ones that
// declare a 2 GB string are read in a child process whose address space is capped, as
// `ulimit -v` caps it: there the read must fail with the check's message, not with bad_alloc.
//
// Under ASan `ulimit -v` / RLIMIT_AS does not work (ASan reserves terabytes of shadow memory at
// start): cap single allocations with ASAN_OPTIONS=max_allocation_size_mb=512:
// allocator_may_return_null=1 instead (libFuzzer's own flag is -malloc_limit_mb). These cases skip
// themselves under ASan.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "core/error.h"
#include "model/torch_file_craft.h"
#include "model/weights_io.h"
#include "test_support.h"

using namespace trainer;
using test::CraftedTensor;

namespace {

using test::sound_weights_records;

// The sound file with data.pkl replaced by the pickle of `t`, archive/data/0 holding
// `record_bytes` bytes (0, 1, 2, 3 as floats, then zeros).
std::vector<char> crafted(const CraftedTensor& t, size_t record_bytes = 16) {
  auto records = sound_weights_records();
  test::record(records, "archive/data.pkl") = test::tensor_dict_pickle(t);
  test::record(records, "archive/data/0").resize(record_bytes, '\0');
  return test::zip_file(records);
}

// Writes `bytes` as w.pt and reads it: the tensors, or the InputError's message.
struct Read {
  model::NamedTensorList weights;
  std::string error;
};
Read read_bytes(const std::vector<char>& bytes) {
  test::TempDir dir;
  std::ofstream(dir / "w.pt", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Read r;
  try {
    r.weights = model::read_weights_file(dir / "w.pt");
  } catch (const core::InputError& e) {
    r.error = e.what();
    const std::string file = (dir / "w.pt").string();
    const auto at = r.error.find(file);
    if (at != std::string::npos) r.error.replace(at, file.size(), "w.pt");
  }
  return r;
}

std::string refused(const std::string& problem) {
  return "weights file w.pt is not a torch.save file of a dict of tensors (" + problem + ")";
}

// Runs `body` in a forked child whose address space may grow by `headroom` bytes beyond what it
// uses at the fork (setrlimit(RLIMIT_AS), what `ulimit -v` sets); returns the child's exit status,
// or 128 + the signal that ended it.
int run_with_address_limit(uint64_t headroom, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    uint64_t used_kb = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmSize:", 0) == 0) used_kb = std::stoull(line.substr(7));
    }
    const rlim_t cap = used_kb * 1024 + headroom;
    const rlimit limit{cap, cap};
    if (used_kb == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(90);
    int rc = 91;
    try {
      rc = body();
    } catch (...) {
      rc = 92;
    }
    _exit(rc);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// In the capped child: 0 when reading `bytes` fails with exactly `expected`, else 1 (printing
// what happened instead).
int expect_refusal(const std::vector<char>& bytes, const std::string& expected) {
  const Read r = read_bytes(bytes);
  if (r.error == expected) return 0;
  std::fprintf(stderr, "expected: %s\ngot: %s\n", expected.c_str(),
               r.error.empty() ? "(read)" : r.error.c_str());
  return 1;
}

constexpr uint64_t kHeadroom = 256ull << 20;  // far below the 2 GB the hostile files declare

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

// The BINUNICODE opcode of the key "w" in a pickle.
size_t key_w_at(const std::string& pickle) {
  const size_t at = pickle.find(std::string("X\x01\0\0\0w", 6));
  REQUIRE(at != std::string::npos);
  return at;
}

// The pickle with the key "w" declared 2^31 - 16 bytes long (the zip's sizes stay right).
std::string with_2gb_key(std::string pickle) {
  const size_t at = key_w_at(pickle);
  pickle.replace(at + 1, 4, std::string("\xf0\xff\xff\x7f", 4));
  return pickle;
}

std::string declares_2gb(const std::string& pickle) {
  const size_t at = key_w_at(pickle);
  return "pickle declares 2147483632 bytes at byte " + std::to_string(at) + " but has " +
         std::to_string(pickle.size() - at - 5) + " left";
}

}  // namespace

TEST_CASE("weights reading: a crafted file of the writer's layout reads back, views included") {
  const Read plain = read_bytes(crafted(CraftedTensor{}));
  REQUIRE(plain.error.empty());
  REQUIRE(plain.weights.size() == 1);
  CHECK(torch::equal(plain.weights[0].second, torch::arange(4, torch::kFloat)));
  CraftedTensor square;  // [[0, 1], [2, 3]]: the last element is 0 + 1 * 2 + 1 * 1 = 3
  square.sizes = {2, 2};
  square.strides = {2, 1};
  const Read r = read_bytes(crafted(square));
  REQUIRE(r.error.empty());
  CHECK(torch::equal(r.weights[0].second, torch::tensor({{0.f, 1.f}, {2.f, 3.f}})));
  CraftedTensor odd;  // elements 1 and 3: 1 + (2 - 1) * 2 = 3
  odd.offset = 1;
  odd.sizes = {2};
  odd.strides = {2};
  CHECK(torch::equal(read_bytes(crafted(odd)).weights.at(0).second, torch::tensor({1.f, 3.f})));
}

TEST_CASE("weights reading: a storage record shorter than its tensor is refused") {
  // Before the check LibTorch gave the storage the 16 bytes its persistent id declares on top of
  // an 8-byte record, and every read of the tensor ran past the record.
  CHECK(read_bytes(crafted(CraftedTensor{}, 8)).error ==
        refused("storage record archive/data/0 holds 8 bytes, its tensor needs 16"));
  CraftedTensor five;  // 5 floats = 20 bytes on the 16-byte record
  five.numel = 5;
  five.sizes = {5};
  CHECK(read_bytes(crafted(five)).error ==
        refused("storage record archive/data/0 holds 16 bytes, its tensor needs 20"));
  CraftedTensor half;  // 4 halves = 8 bytes: fits, and reads
  half.storage_type = "HalfStorage";
  CHECK(read_bytes(crafted(half)).error.empty());
  CraftedTensor lost;
  lost.key = "7";
  CHECK(read_bytes(crafted(lost)).error == refused("storage record archive/data/7 is missing"));
}

TEST_CASE("weights reading: a tensor view reaching past its storage is refused") {
  // LibTorch sets _rebuild_tensor_v2's sizes and strides on the storage without a bounds check.
  const auto past = [](const CraftedTensor& t) {
    const std::string pickle = test::tensor_dict_pickle(t);
    // The rebuild's REDUCE is the pickle's last "R" (it ends "Rs.").
    return refused("pickle rebuilds a tensor that reaches past its storage of 4 elements at byte " +
                   std::to_string(pickle.size() - 3));
  };
  CraftedTensor longer;  // element 4 of 0..3
  longer.sizes = {5};
  CHECK(read_bytes(crafted(longer)).error == past(longer));
  CraftedTensor shifted;  // 1 + (4 - 1) * 1 = 4
  shifted.offset = 1;
  CHECK(read_bytes(crafted(shifted)).error == past(shifted));
  CraftedTensor strided;  // 0 + (3 - 1) * 2 = 4
  strided.sizes = {3};
  strided.strides = {2};
  CHECK(read_bytes(crafted(strided)).error == past(strided));
  CraftedTensor backwards;
  backwards.strides = {-1};
  CHECK(read_bytes(crafted(backwards)).error ==
        refused("pickle rebuilds a tensor with a negative size or stride at byte " +
                std::to_string(test::tensor_dict_pickle(backwards).size() - 3)));
  CraftedTensor empty;  // no element is read: any offset will do
  empty.offset = 100;
  empty.sizes = {0};
  CHECK(read_bytes(crafted(empty)).error.empty());
}

TEST_CASE("weights reading: an unknown storage type is refused") {
  CraftedTensor t;
  t.storage_type = "Float8_e4m3fnStorage";
  const std::string pickle = test::tensor_dict_pickle(t);
  CHECK(read_bytes(crafted(t)).error ==
        refused("pickle names torch.Float8_e4m3fnStorage, which is not on the allow-list at byte " +
                std::to_string(pickle.find("ctorch\nFloat8"))));
}

TEST_CASE("weights reading: a 2 GB string in data.pkl is refused in a capped address space") {
  if (kAsan) return;  // see the top of this file: ASan needs max_allocation_size_mb instead
  auto records = sound_weights_records();
  std::string& pickle = test::record(records, "archive/data.pkl");
  const std::string expected = refused(declares_2gb(pickle));
  pickle = with_2gb_key(pickle);
  const std::vector<char> bytes = test::zip_file(records);
  CHECK(run_with_address_limit(kHeadroom, [&] { return expect_refusal(bytes, expected); }) == 0);
  // The cap is real: the child cannot allocate what the file declares.
  CHECK(run_with_address_limit(kHeadroom, [] {
          try {
            std::string big(2147483632u, 'x');
            return big.empty() ? 2 : 1;
          } catch (const std::bad_alloc&) {
            return 0;
          }
        }) == 0);
}

TEST_CASE("weights reading: the check reads the data.pkl LibTorch reads, not a decoy") {
  if (kAsan) return;
  // LibTorch takes the archive's folder from the FIRST zip entry (the writer puts archive/data/0
  // first) and reads <folder>/data.pkl; a sound other/data.pkl listed before it must not stand in.
  auto records = sound_weights_records();
  REQUIRE(records.front().first == "archive/data/0");
  const std::string sound = test::record(records, "archive/data.pkl");
  test::record(records, "archive/data.pkl") = with_2gb_key(sound);
  records.insert(records.begin() + 1, {"other/data.pkl", sound});
  const std::vector<char> bytes = test::zip_file(records);
  const std::string expected = refused(declares_2gb(sound));
  CHECK(run_with_address_limit(kHeadroom, [&] { return expect_refusal(bytes, expected); }) == 0);
}

TEST_CASE("weights reading: names LibTorch would confuse are refused") {
  // miniz finds names case-insensitively: with two data.pkl differing in case it reads either.
  auto records = sound_weights_records();
  CraftedTensor longer;
  longer.sizes = {5};
  records.push_back({"archive/DATA.pkl", test::tensor_dict_pickle(longer)});
  CHECK(read_bytes(test::zip_file(records)).error ==
        refused("zip holds two entries named archive/DATA.pkl (readers would take either)"));
  auto stray = sound_weights_records();
  stray.insert(stray.begin(), {"stray", "x"});
  CHECK(read_bytes(test::zip_file(stray)).error ==
        refused("the first zip entry is not inside a folder"));
}

TEST_CASE("weights reading: deep nesting, self-containing values and module cycles are refused") {
  // The pickle machine builds them without recursion; turning them into tensors and containers
  // stops at a bound with the problem named.
  const auto with_pickle = [](const std::string& pickle) {
    auto records = sound_weights_records();
    test::record(records, "archive/data.pkl") = pickle;
    return test::zip_file(records);
  };
  const std::string proto("\x80\x02", 2);
  CHECK(
      read_bytes(with_pickle(proto + std::string(200, ']') + std::string(199, 'a') + ".")).error ==
      refused("its values nest deeper than 128 levels"));
  CHECK(read_bytes(
            with_pickle(proto + "]q" + std::string(1, '\0') + "h" + std::string(1, '\0') + "a."))
            .error == refused("a container in it contains itself"));
  // {'model': m} where m is a torch.nn Module whose _modules hold m itself.
  const std::string cycle =
      proto + "}" + test::pickle_string("model") + "ctorch.nn.modules.module\nModule\n)\x81q\x01}" +
      test::pickle_string("_modules") + "}" + test::pickle_string("child") + "h\x01ssbs.";
  CHECK(read_bytes(with_pickle(cycle)).error == refused("a module in it contains itself (child.)"));
}
