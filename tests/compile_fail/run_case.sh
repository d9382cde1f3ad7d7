#!/usr/bin/env bash
# Compile-fail test driver. CMake's WILL_FAIL inverts a test's result *after* its
# PASS_REGULAR_EXPRESSION check, so "must fail AND print X" cannot be said with test
# properties; this script says it and exits 0 only when every requirement holds.
#
#   run_case.sh fail CASE KIND COMPILER FLAGS...   must not compile; the output must match
#       every `// expect:` and `// expect-KIND:` line of CASE (extended regexes, each
#       matched against single lines), and the first error line must match
#       `// first-error-KIND:`, else `// first-error:`, else be devmesh's own diagnostic:
#       its message, right after `error:` (or a failed static_assert's own words), is
#       devmesh's text "devmesh: ..." (the failing static_assert comes first: no cascade of
#       errors before it). A qualified name (`devmesh::mesh<...>` in an unrelated error) is
#       not devmesh's diagnostic. With the default rule, every error line must be one of
#       devmesh's diagnostics (no unrelated error after it either).
# On a rejection the last line says why: "COMPILE-FAIL HARNESS: <reason>" (the controls,
# run through expect_rejection.sh, check it).
#   run_case.sh pass CASE KIND COMPILER FLAGS...   must compile, with no error line.
# KIND is gcc, clang or nvcc: it selects the per-compiler expectations. A file that holds
# several cases, chosen by -DDEVMESH_CASE=N on the command line, gives each one's expectations
# as `// expect-case-N:` lines (with its `// expect:` lines, which every case must meet).
# In an expectation, name"pp" stands for the dim name pp as KIND prints it (see
# include/devmesh/core/fixed_string.hpp): g++ name<devmesh::fixed_string<3>{"pp"}>, clang and
# nvcc name<'p', 'p'>.
set -u
mode=$1 case_file=$2 kind=$3
shift 3
out=$("$@" "$case_file" 2>&1)
rc=$?
# An error line: "file:12:3: error: ...", "file(12): error: ...", "error #123-D: ...".
error_re=': (fatal )?error( #[0-9A-Za-z-]+)?:'
first_error=$(grep -E -m1 -e "$error_re" <<<"$out")
# devmesh's diagnostic: the error's message is devmesh's text, as each compiler prints a failed
# static_assert's message (g++ `static assertion failed: devmesh: ...`, clang `static_assert
# failed due to requirement '...' "devmesh: ..."`, nvcc `static assertion failed with "devmesh:
# ..."`) or as an error of its own (`error: devmesh: ...`).
devmesh_re="$error_re (static assertion failed(: | with \")|static_assert failed( due to requirement .*)? \")?devmesh: "

fail() {
  printf '%s\n' "---- compiler output (exit $rc) ----" "$out" "----" >&2
  printf 'COMPILE-FAIL HARNESS: %s\n' "$*" >&2
  exit 1
}

case $mode in
  pass)
    [[ $rc -eq 0 && -z $first_error ]] || fail "expected $case_file to compile"
    echo "ok: compiles as expected"
    exit 0 ;;
  fail) ;;
  *) echo "usage: run_case.sh fail|pass CASE KIND COMPILER FLAGS..." >&2; exit 2 ;;
esac

[[ $rc -ne 0 ]] || fail "expected a compile error, but the compiler exited 0"

# Expectations from the case file's header comments.
directive() { sed -n "s|^// $1: \{0,1\}||p" "$case_file"; }
# name"pp" -> the regex of name<"pp"> as KIND prints it (a name holds no '"').
spell_names() {
  local line n esc c i chars
  while IFS= read -r line; do
    while [[ $line =~ name\"([^\"]*)\" ]]; do
      n=${BASH_REMATCH[1]} esc='' chars=''
      for ((i = 0; i < ${#n}; i++)); do
        c=${n:i:1}
        [[ '.[]\*+?{}|^$()' == *"$c"* ]] && c="\\$c"
        esc+=$c
        chars+="${chars:+, }'$c'"
      done
      if [[ $kind == gcc ]]; then
        line=${line/"${BASH_REMATCH[0]}"/"name<devmesh::fixed_string<$((${#n} + 1))>\{\"$esc\"\}>"}
      else
        line=${line/"${BASH_REMATCH[0]}"/"name<$chars>"}
      fi
    done
    printf '%s\n' "$line"
  done
}
variant=""
for arg in "$@"; do
  [[ $arg == -DDEVMESH_CASE=* ]] && variant=${arg#-DDEVMESH_CASE=}
done
mapfile -t expects < <({
  directive expect
  directive "expect-$kind"
  [[ -z $variant ]] || directive "expect-case-$variant"
} | spell_names)
[[ ${#expects[@]} -gt 0 ]] || fail "$case_file has no '// expect:' line"
for re in "${expects[@]}"; do
  grep -E -q -e "$re" <<<"$out" || fail "no output line matches: $re"
done

first_re=$(directive "first-error-$kind" | head -n1)
[[ -n $first_re ]] || first_re=$(directive first-error | head -n1)
[[ -n $first_error ]] || fail "no error line in the output"
if [[ -n $first_re ]]; then
  grep -E -q -e "$first_re" <<<"$first_error" ||
    fail "the first error is not the expected one ($first_re): $first_error"
else
  grep -E -q -e "$devmesh_re" <<<"$first_error" ||
    fail "the first error is not devmesh's diagnostic: $first_error"
  # By default devmesh's diagnostics are also the only errors: no cascade after them.
  other=$(grep -E -e "$error_re" <<<"$out" | grep -E -v -m1 -e "$devmesh_re")
  [[ -z $other ]] || fail "an error that is not devmesh's diagnostic follows it (a cascade): $other"
fi

echo "ok: rejected with the expected diagnostic first: $first_error"
