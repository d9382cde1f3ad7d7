// devmesh/runtime/impl/deadline.ipp: deadline.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
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

namespace detail {
/// The one rule for seconds (the environment's): digits, optionally a point and at most three
/// more digits (whole milliseconds), nothing else (no sign, space, exponent, hex, unit);
/// > 0 (or 0 with zero_is_off), <= 10^9 s. Returns the milliseconds, or -1 if `v` breaks it.
DEVMESH_DECL long long parse_seconds(std::string_view v, bool zero_is_off) {
  long long whole = 0, ms = 0;
  std::size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    whole = whole * 10 + (v[i] - '0');
    if (whole * 1000 > max_bound.count()) return -1;
  }
  if (i == 0) return -1;
  if (i < v.size() && v[i] == '.') {
    std::size_t digits = 0;
    for (++i; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i, ++digits) {
      if (digits >= 3) {
        if (v[i] != '0') return -1;  // below a millisecond
        continue;
      }
      ms = ms * 10 + (v[i] - '0');
    }
    if (digits == 0) return -1;
    for (; digits < 3; ++digits) ms *= 10;
  }
  if (i != v.size()) return -1;
  const long long total = whole * 1000 + ms;
  if (total > max_bound.count() || (total == 0 && !zero_is_off)) return -1;
  return total;
}
/// The error naming `what` (a variable or an option) and its value, and the rule.
DEVMESH_DECL std::string seconds_rule_error(std::string_view what, std::string_view value, bool zero_is_off) {
  return "devmesh: " + std::string(what) + "='" + std::string(value) +
         "' is not a number of seconds: write digits with at most three decimals (whole milliseconds), from 0.001 to " +
         std::to_string(max_bound.count() / 1000) +
         (zero_is_off ? std::string(", or 0: off") : std::string()) +
         ", with no sign, space, exponent, hex or unit (e.g. " + std::string(what) + "=600)";
}
}  // namespace detail

DEVMESH_DECL std::chrono::milliseconds seconds_from_env(const char* var, std::chrono::milliseconds fallback,
                                                        bool zero_is_off) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  const long long ms = detail::parse_seconds(v, zero_is_off);
  if (ms < 0) throw mesh_error(detail::seconds_rule_error(var, v, zero_is_off));
  return std::chrono::milliseconds(ms);
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

DEVMESH_DECL bool switch_from_env(const char* var, bool fallback) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  const std::string_view s = v;
  if (s == "0" || s == "1") return s == "1";
  throw mesh_error("devmesh: " + std::string(var) + "='" + std::string(s) + "' is not a switch: 0 (off) or 1 (on)");
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
