// tests/gpu/compare.cpp: an example's output on the CPU backend against its output with
// --backend nccl. The texts must be the same once every number is compared with a
// tolerance (the backends add floats in different orders: 2e-5 absolute, the examples' own
// bound being 1e-5 against one process) and the backend's name is ignored; both must end
// well ("OK:" line). NCCL's own INFO/WARN lines are skipped.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"

namespace gpu_check {

namespace {

struct token {
  bool number = false;
  double value = 0;
  std::string text;
};

std::string without_nccl_lines(const std::string& in) {
  std::istringstream is(in);
  std::string line, out;
  while (std::getline(is, line))
    if (line.find("NCCL INFO") == std::string::npos && line.find("NCCL WARN") == std::string::npos) out += line + "\n";
  return out;
}

/// Numbers (optional sign, digits, fraction, exponent) and the text between them, with
/// runs of white space collapsed and the backend names made equal.
std::vector<token> tokens(const std::string& raw) {
  const std::string s = without_nccl_lines(raw);
  std::vector<token> out;
  std::string text;
  auto flush = [&] {
    if (text.empty()) return;
    std::string t;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 4, "nccl") == 0) t += "<backend>", i += 3;
      else if (text.compare(i, 3, "mpi") == 0) t += "<backend>", i += 2;
      else t += text[i];
    }
    out.push_back({false, 0, t});
    text.clear();
  };
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const bool prev_word = i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_');
    const bool starts_number = std::isdigit(static_cast<unsigned char>(c)) ||
                               (c == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])));
    if (starts_number && !prev_word) {
      flush();
      char* end = nullptr;
      const double v = std::strtod(s.c_str() + i, &end);
      const std::size_t len = static_cast<std::size_t>(end - (s.c_str() + i));
      out.push_back({true, v, s.substr(i, len)});
      i += len;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (text.empty() || text.back() != ' ') text += ' ';
    } else {
      text += c;
    }
    ++i;
  }
  flush();
  return out;
}

bool has_ok_line(const std::string& s) { return s.rfind("OK:", 0) == 0 || s.find("\nOK:") != std::string::npos; }

}  // namespace

result compare_outputs(const std::string& cpu_text, const std::string& gpu_text) {
  if (!has_ok_line(cpu_text)) return {false, "the CPU run printed no OK: line"};
  if (!has_ok_line(gpu_text)) return {false, "the NCCL run printed no OK: line"};
  const auto a = tokens(cpu_text), b = tokens(gpu_text);
  double max_diff = 0;
  int numbers = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i >= a.size() || i >= b.size())
      return {false, "the outputs have different lengths (" + std::to_string(a.size()) + " and " +
                         std::to_string(b.size()) + " tokens)"};
    const token &x = a[i], &y = b[i];
    if (x.number != y.number || (!x.number && x.text != y.text))
      return {false, "text differs at token " + std::to_string(i) + ": '" + x.text + "' (CPU) vs '" + y.text + "' (NCCL)"};
    if (!x.number) continue;
    ++numbers;
    const double d = std::fabs(x.value - y.value);
    max_diff = std::max(max_diff, d);
    if (d > 2e-5 + 1e-5 * std::fabs(x.value))
      return {false, "number " + std::to_string(numbers) + " differs: " + x.text + " (CPU) vs " + y.text + " (NCCL)"};
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d numbers equal within 2e-5 (max |diff| %.2e), the rest of the text identical",
                numbers, max_diff);
  return {true, buf};
}

}  // namespace gpu_check
