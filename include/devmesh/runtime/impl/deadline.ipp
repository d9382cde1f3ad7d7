// devmesh/runtime/impl/deadline.ipp: deadline.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "../deadline.hpp"

namespace devmesh {

DEVMESH_DECL std::string deadline::describe() const {
  if (at == std::chrono::steady_clock::time_point::max()) return "no deadline";
  const double s = static_cast<double>(bound.count()) / 1000.0;
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + " s";
}

DEVMESH_DECL std::chrono::milliseconds seconds_from_env(const char* var, std::chrono::milliseconds fallback,
                                                        bool zero_is_off) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !((s > 0 || (zero_is_off && s == 0)) && s <= 1e9))  // refuses NaN, infinities
    throw mesh_error(std::string("devmesh: ") + var + "='" + v + "' is not a number of seconds > 0" +
                     (zero_is_off ? " (or 0: off)" : "") + " (e.g. " + var + "=600)");
  const double ms = s * 1000.0;  // rounded up to whole milliseconds
  const auto whole = static_cast<long long>(ms);
  return std::chrono::milliseconds(whole + (static_cast<double>(whole) < ms ? 1 : 0));
}

DEVMESH_DECL std::chrono::milliseconds timeout_from_env(std::chrono::milliseconds fallback) {
  return seconds_from_env("DEVMESH_TIMEOUT", fallback);
}

DEVMESH_DECL bool check_collectives_from_env() {
  const char* v = std::getenv("DEVMESH_CHECK_COLLECTIVES");
  if (!v) return false;
  const std::string s = v;
  return !(s.empty() || s == "0" || s == "false" || s == "off" || s == "OFF" || s == "False");
}

namespace detail {

DEVMESH_DECL bool poll_until(const deadline& d, call_ref<bool> done) {
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < spin_until)
    if (done()) return true;
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    if (done()) return true;
    if (d.passed()) return done();
    std::this_thread::sleep_for(nap);
    nap = nap * 2 < std::chrono::microseconds(500) ? nap * 2 : std::chrono::microseconds(500);
  }
}

}  // namespace detail
}  // namespace devmesh
