// The structural check of torch.save files (model/pickle_check.h, model/torch_zip_check.h): each
// opcode's argument, the persistent ids and views the pickle replay finds, and the zip-level
// rules, against hand-computed byte positions and sizes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/pickle_check.h"
#include "model/torch_file_craft.h"
#include "model/torch_zip_check.h"

using namespace trainer::model;
using trainer::test::pickle_int;
using trainer::test::pickle_int_tuple;
using trainer::test::pickle_string;

namespace {

std::optional<std::string> check(const std::string& pickle,
                                 std::vector<StorageRead>* storages = nullptr) {
  return check_pickle(reinterpret_cast<const unsigned char*>(pickle.data()), pickle.size(),
                      storages);
}

const std::string kProto2("\x80\x02", 2);

// BINPERSID of ('storage', torch.<type>, key, 'cpu', numel) given the numel's opcode.
std::string storage(const std::string& key, const std::string& numel,
                    const std::string& type = "FloatStorage") {
  return "(" + pickle_string("storage") + "ctorch\n" + type + "\n" + pickle_string(key) +
         pickle_string("cpu") + numel + "tQ";
}

}  // namespace

TEST_CASE("pickle check: each opcode's argument must fit") {
  CHECK_FALSE(check(std::string("\x80\x02K\x05.", 5)));           // PROTO 2, BININT1 5, STOP
  CHECK_FALSE(check(std::string("\x80\x02X\x02\0\0\0ab.", 10)));  // a 2-byte string
  CHECK_FALSE(check(kProto2 + "ctorch\nFloatStorage\n."));        // GLOBAL: two lines of text
  CHECK(*check(std::string("\x80\x02X\x04\0\0\0ab.", 10)) ==
        "pickle declares 4 bytes at byte 2 but has 3 left");
  CHECK(*check(std::string("\x80\x02K\x05", 4)) == "pickle has no STOP opcode");
  CHECK(*check(std::string("\x80\x02K", 3)) == "pickle ends inside an opcode");
  CHECK(*check(kProto2 + "ctorch\n") == "pickle ends inside a text argument");
  CHECK(*check(std::string("\x80\x02Nr\xff\xff\xff\x7f.", 9)) ==
        "pickle memo index at byte 3 is out of range");
  CHECK(*check(std::string("\x80\x02\xff.", 4)) == "unknown pickle opcode 0xff at byte 2");
}

TEST_CASE("pickle check: the stack replay refuses what LibTorch would misuse") {
  CHECK(*check(kProto2 + "t.") == "pickle closes a MARK it never opened at byte 2");
  CHECK(*check(kProto2 + "h\x05.") == "pickle reads memo entry 5 before writing it at byte 2");
  // LibTorch's REDUCE calls the function a number indexes (a GLOBAL pushes such a number).
  CHECK(*check(std::string("\x80\x02K\0)R.", 7)) == "pickle calls a number at byte 5");
  CHECK(*check(kProto2 + "ctorch._utils\n_rebuild_sparse_tensor\n.") ==
        "pickle rebuilds a sparse tensor (not read: LibTorch does not check its indices) at "
        "byte 2");
  CHECK(*check(kProto2 + "ctorch\nper_tensor_affine\n.") ==
        "pickle names an unknown global torch.per_tensor_affine at byte 2");
  CHECK_FALSE(check(kProto2 + "ccollections\nOrderedDict\n)R."));  // calls a registered function
}

TEST_CASE("pickle check: persistent ids are storages of a known type and size") {
  // ('storage', 1): bytes 2 MARK, 3..14 'storage', 15..16 BININT1, 17 TUPLE, 18 BINPERSID.
  CHECK(*check(kProto2 + "(" + pickle_string("storage") + "K\x01tQ.") ==
        "pickle has a persistent id that is not ('storage', type, key, location, numel) at byte "
        "18");
  // ('storage', 5, '0', 'cpu', 4): 15..16 the 5, 17..22 '0', 23..30 'cpu', 31..32 4, 33 TUPLE.
  CHECK(*check(kProto2 + "(" + pickle_string("storage") + "K\x05" + pickle_string("0") +
               pickle_string("cpu") + "K\x04tQ.") ==
        "pickle has a persistent id without a storage type at byte 34");
  // GLOBAL torch FloatStorage takes 15..34, '0' 35..40, 'cpu' 41..48, the numel 49..53.
  CHECK(*check(kProto2 + storage("0", std::string("J\xff\xff\xff\xff", 5)) + ".") ==
        "pickle declares a storage of -1 elements at byte 55");
  CHECK(*check(kProto2 + storage("0", std::string("\x8a\x02\xff\xff", 4)) + ".") ==
        "pickle declares a storage of -1 elements at byte 54");  // LONG1 -1 is one byte shorter
  CHECK(*check(kProto2 + storage("0", "K\x01", "Float8_e5m2Storage") + ".") ==
        "pickle names an unknown storage type torch.Float8_e5m2Storage at byte 15");
}

TEST_CASE("pickle check: each storage read is reported once, with its bytes and its reads") {
  std::vector<StorageRead> storages;
  const std::string same = "h\x01Q";  // the memoized id tuple of key "0" again
  const std::string pickle =
      kProto2 + "(" + "(" + pickle_string("storage") + "ctorch\nFloatStorage\n" +
      pickle_string("0") + pickle_string("cpu") + "K\x04" + "tq\x01Q" + same +
      storage("1", pickle_int(0), "DoubleStorage") + storage("2", "K\x03", "LongStorage") +
      storage("3", std::string("\x8a\x08\0\0\0\0\x02\0\0\0", 10), "HalfStorage") + "t.";
  REQUIRE_FALSE(check(pickle, &storages));
  REQUIRE(storages.size() == 3);  // key "1" has no elements: LibTorch reads no record for it
  CHECK(storages[0].key == "0");
  CHECK(storages[0].bytes == 16);  // 4 floats
  CHECK(storages[0].reads == 2);
  CHECK(storages[1].key == "2");
  CHECK(storages[1].bytes == 24);  // 3 longs
  CHECK(storages[1].reads == 1);
  CHECK(storages[2].key == "3");
  CHECK(storages[2].bytes == 17179869184u);  // 2^33 halves = 2^34 bytes
}

TEST_CASE("pickle check: a tensor subclass's view is checked like a plain tensor's") {
  // torch._tensor._rebuild_from_type_v2(func, type, args, state): LibTorch calls the function
  // registered after its own (here _rebuild_tensor_v2) on args; `type`'s GLOBAL pushes that index.
  const auto subclass = [](std::vector<int64_t> sizes) {
    return kProto2 + "ctorch._tensor\n_rebuild_from_type_v2\n(" +
           "ctorch._utils\n_rebuild_tensor_v2\nctorch\nTensor\n(" + storage("0", "K\x04") +
           pickle_int(0) + pickle_int_tuple(sizes) + pickle_int_tuple({1}) + "\x89}t}tR.";
  };
  CHECK_FALSE(check(subclass({4})));
  const std::string past = subclass({5});
  CHECK(*check(past) ==
        "pickle rebuilds a tensor that reaches past its storage of 4 elements at "
        "byte " +
            std::to_string(past.size() - 2));
}

TEST_CASE("torch zip check: storage records copied beyond 8 bytes per file byte are refused") {
  // LibTorch copies the record for every persistent id naming it. A 40000-byte record read 8
  // times is 320000 bytes, 9 times 360000, from a file of 40000 + a few hundred bytes: the bound
  // (8 x the file size) lies between the two.
  const auto file = [](int reads) {
    auto records = trainer::test::sound_weights_records();
    std::string pickle = kProto2 + "}(";
    for (int i = 0; i < reads; ++i) {
      pickle += pickle_string(std::string(1, static_cast<char>('a' + i))) +
                storage("0", pickle_int(10000));
    }
    trainer::test::record(records, "archive/data.pkl") = pickle + "u.";
    trainer::test::record(records, "archive/data/0").resize(40000, '\0');
    return trainer::test::zip_file(records);
  };
  const std::vector<char> eight = file(8);
  const std::vector<char> nine = file(9);
  REQUIRE(eight.size() * 8 >= 320000);
  REQUIRE(nine.size() * 8 < 360000);
  CHECK_FALSE(check_torch_zip(eight));
  CHECK(*check_torch_zip(nine) == "pickle reads 360000 bytes of storage records from a file of " +
                                      std::to_string(nine.size()) + " bytes");
}
