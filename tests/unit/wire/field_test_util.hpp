// Table-driven checks for header field accessors. Each field is described the
// way the standards draw it: first bit (0 = most significant bit of byte 0)
// and width. The checks read bits through that description only, never
// through the accessor under test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vf::test {

struct FieldSpec {
  std::string name;
  unsigned hdr_len;  // bytes
  unsigned bit_off;  // from the most significant bit of byte 0
  unsigned width;    // bits, <= 64
  uint64_t (*get)(const uint8_t*);
  void (*set)(uint8_t*, uint64_t);  // nullptr: getter-only field
};

// Reads `width` bits at `bit_off` bit by bit (the independent reference).
uint64_t read_bits(const uint8_t* h, unsigned bit_off, unsigned width);
// Sets `width` bits at `bit_off` in a byte mask.
void mark_bits(std::vector<uint8_t>& mask, unsigned bit_off, unsigned width);

// For every field: getter matches the bit description on random headers;
// setting all ones on a zeroed header sets exactly the field's bits; setting
// zero on an all-ones header clears exactly them; random values round-trip
// and leave every other bit as it was; wider values are cut to the field.
void check_fields(const std::vector<FieldSpec>& fields);

}  // namespace vf::test

// Builds a FieldSpec from an accessor pair; T is the setter's value type.
#define VF_FIELD(hdr_len, off, width, getter, setter, T)                                   \
  ::vf::test::FieldSpec {                                                                   \
    #getter, hdr_len, off, width, [](const uint8_t* h) -> uint64_t { return getter(h); }, \
        [](uint8_t* h, uint64_t v) { setter(h, static_cast<T>(v)); }                        \
  }
// A one-bit flag whose setter takes bool.
#define VF_FLAG(hdr_len, off, getter, setter)                                              \
  ::vf::test::FieldSpec {                                                                   \
    #getter, hdr_len, off, 1, [](const uint8_t* h) -> uint64_t { return getter(h); },     \
        [](uint8_t* h, uint64_t v) { setter(h, (v & 1) != 0); }                             \
  }
#define VF_FIELD_RO(hdr_len, off, width, getter)                                            \
  ::vf::test::FieldSpec {                                                                   \
    #getter, hdr_len, off, width, [](const uint8_t* h) -> uint64_t { return getter(h); }, \
        nullptr                                                                             \
  }
