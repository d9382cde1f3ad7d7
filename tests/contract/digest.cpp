// The consistency check's digest: SHA-256 against the FIPS 180-4 / NIST example vectors
// (compile time and run time), and the property the check relies on: descriptors that a
// 64-bit FNV-1a hash could be made to confuse are told apart.
#include <string>

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <devmesh/runtime/digest.hpp>

namespace dm = devmesh;

// FIPS 180-4 examples ("abc", the empty string, the two-block message).
static_assert(dm::sha256("abc") == dm::digest{0xba7816bf8f01cfeaULL, 0x414140de5dae2223ULL, 0xb00361a396177a9cULL,
                                              0xb410ff61f20015adULL});
static_assert(dm::sha256("") == dm::digest{0xe3b0c44298fc1c14ULL, 0x9afbf4c8996fb924ULL, 0x27ae41e4649b934cULL,
                                           0xa495991b7852b855ULL});
static_assert(dm::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
              dm::digest{0x248d6a61d20638b8ULL, 0xe5c026930c3e6039ULL, 0xa33ce45964ff2167ULL, 0xf6ecedd419db06c1ULL});

// One million 'a' (NIST's long example): many blocks at run time.
TEST_CASE("sha256 of one million 'a'") {
  CHECK(dm::sha256(std::string(1000000, 'a')) ==
        dm::digest{0xcdc76e5c9914fb92ULL, 0x81a1c7e284d73e67ULL, 0xf1809a48a497200eULL, 0x046d39ccc7112cd0ULL});
}

// Padding boundaries: 55, 56, 63, 64 and 65 bytes give distinct digests and differ from
// their neighbours by one byte.
TEST_CASE("padding boundaries") {
  for (std::size_t n : {55u, 56u, 63u, 64u, 65u}) {
    CAPTURE(n);
    CHECK(dm::sha256(std::string(n, 'x')) != dm::sha256(std::string(n + 1, 'x')));
  }
}

// Two meshes whose descriptors differ only in the order of their sizes.
TEST_CASE("two meshes") {
  CHECK(dm::sha256("mesh((dp=4, tp=2), stride=(2, 1))") != dm::sha256("mesh((dp=2, tp=4), stride=(4, 1))"));
}
