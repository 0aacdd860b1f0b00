// CRC32C (Castagnoli), the checksum TFRecord files carry, and the mask TFRecord applies to it.
//
// Why: TensorBoard's reader checks every record's length and payload against a masked CRC32C;
// a table-driven software CRC is fast enough for a few records per epoch and needs no library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainer::core::tensorboard {

// The CRC32C of `data` (reflected polynomial 0x82F63B78, initial value and final xor ~0).
uint32_t crc32c(std::string_view data);

// TFRecord's mask: rotate right by 15 bits, then add 0xa282ead8 (mod 2^32).
uint32_t mask_crc(uint32_t crc);

inline uint32_t masked_crc32c(std::string_view data) {
  return mask_crc(crc32c(data));
}

}  // namespace trainer::core::tensorboard
