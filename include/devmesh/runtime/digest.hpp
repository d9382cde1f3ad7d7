// devmesh/runtime/digest.hpp: SHA-256 of a byte string (FIPS 180-4), for the mesh consistency check.
//
// Ranks compare what they are about to build by digest, so that the common path moves a
// constant 64 bytes per rank whatever the world size. The digest is collision-resistant:
// a user string (a per_dim key, a communicator name) crafted to collide cannot make two
// ranks build different meshes unnoticed, as it could with a 64-bit FNV hash.
//
// One algorithm, constexpr (a digest can be a constant); at run time it is reached through
// one compiled function (runtime/impl/digest.ipp), so that a program that hashes does not
// emit it again in every file.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../core/config.hpp"

namespace devmesh {

/// A SHA-256 digest as four 64-bit words (big-endian order of the standard's bytes).
using digest = std::array<std::uint64_t, 4>;

namespace detail {

inline constexpr std::uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// One 64-byte block into the state h.
constexpr void sha256_block(std::array<std::uint32_t, 8>& h, const unsigned char* p) {
  std::uint32_t w[64]{};
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 | std::uint32_t(p[4 * i + 2]) << 8 |
           std::uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::array<std::uint32_t, 8> v = h;
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
    const std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
    const std::uint32_t t1 = v[7] + s1 + ch + sha256_k[i] + w[i];
    const std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
    const std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    for (int j = 7; j > 0; --j) v[j] = v[j - 1];
    v[4] += t1;
    v[0] = t1 + s0 + maj;
  }
  for (int i = 0; i < 8; ++i) h[i] += v[i];
}

/// SHA-256 of `text`, the algorithm (sha256 below picks where it runs).
constexpr digest sha256_of(std::string_view text) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const std::uint64_t bits = static_cast<std::uint64_t>(text.size()) * 8;
  const std::size_t full = text.size() / 64 * 64;
  unsigned char block[64]{};
  for (std::size_t i = 0; i < full; i += 64) {
    for (int j = 0; j < 64; ++j) block[j] = static_cast<unsigned char>(text[i + j]);
    sha256_block(h, block);
  }
  // The tail, the 0x80 marker and the length, in one or two blocks.
  unsigned char tail[128]{};
  const std::size_t rest = text.size() % 64;  // < 64, visibly to the compiler's bounds checks
  for (std::size_t j = 0; j < rest; ++j) tail[j] = static_cast<unsigned char>(text[full + j]);
  tail[rest] = 0x80;
  const std::size_t blocks = rest + 9 <= 64 ? 1 : 2;
  for (int j = 0; j < 8; ++j) tail[blocks * 64 - 1 - j] = static_cast<unsigned char>(bits >> (8 * j));
  for (std::size_t b = 0; b < blocks; ++b) sha256_block(h, tail + 64 * b);
  digest d{};
  for (int j = 0; j < 4; ++j) d[j] = std::uint64_t(h[2 * j]) << 32 | h[2 * j + 1];
  return d;
}

/// sha256_of at run time, compiled once.
DEVMESH_DECL digest sha256_at_run_time(std::string_view text);

}  // namespace detail

/// SHA-256 of `text`: in a constant expression, computed there; at run time, by the compiled
/// function.
constexpr digest sha256(std::string_view text) {
  if (std::is_constant_evaluated()) return detail::sha256_of(text);
  return detail::sha256_at_run_time(text);
}

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/digest.ipp"
#endif
