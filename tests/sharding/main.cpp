// The one doctest main of the sharding unit tests (each suite is its own ctest entry).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
