#!/usr/bin/env bash
# Prints, for each compile-fail case, the lines of g++'s and nvcc's output that
# docs/errors.md quotes (the error line and the line naming the error type), with paths
# shortened, line numbers dropped and lines cut at 330 characters (" …"), as quoted there.
# Used to refresh the excerpts there:  tests/compile_fail/excerpts.sh [case...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=($(cd "$root/tests/compile_fail/cases" && ls *.cpp | sed 's/\.cpp$//'))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
shorten() {
  sed -E -e "s|$root/include/||g" -e "s|$root/tests/compile_fail/cases/||g" -e 's/‘/'"'"'/g' -e 's/’/'"'"'/g' \
    -e 's/^([^ ]+\.(hpp|cpp|cu))(:[0-9]+:[0-9]+:|\([0-9]+\):)/\1:/' -e 's/" at line [0-9]+( of [^ ]+)?$/"/'
}
cut_long() { sed -E 's/^(.{330}).+$/\1 …/'; }
for c in "${cases[@]}"; do
  f=$root/tests/compile_fail/cases/$c.cpp
  echo "### $c"
  echo "g++:"
  g++ -std=c++20 -fsyntax-only -I"$root/include" "$f" 2>&1 | shorten |
    grep -E -m3 "In instantiation of 'static constexpr void devmesh::error|: error: |note: .*fail_|devmesh: every" | cut_long
  if [[ -x $nvcc ]]; then
    echo "nvcc:"
    "$nvcc" -std=c++20 --expt-relaxed-constexpr -x cu -I"$root/include" -c -o /dev/null "$f" 2>&1 | shorten |
      grep -E -m3 ': error|instantiation of "void devmesh::error|note #[0-9]+-D: (cannot call|type constraint)' | sed 's/^ *//' | cut_long
  fi
  echo
done
