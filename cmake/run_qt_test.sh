#!/usr/bin/env bash
# Runs one Qt Test binary for CTest and decides its outcome from every test function's result:
#   - the binary exits non-zero (a FAIL!, a crash, a timeout)       -> exit 1: Failed, whatever skipped
#   - it exits 0 but printed no PASS or SKIP line (no Qt Test ran)  -> exit 1: Failed
#   - every test function skipped, none passed                      -> exit 77: Skipped
#     (WorkbenchTests.cmake sets SKIP_RETURN_CODE 77; Qt Test's own exit code is never passed on)
#   - otherwise                                                     -> exit 0: Passed, the skips listed
# CTest's SKIP_REGULAR_EXPRESSION on "SKIP   : " would report the whole binary Skipped on any one
# SKIP line "regardless of the process exit code", hiding a FAIL in another function.
#
#   bash run_qt_test.sh TIMEOUT_S BINARY [ARGS...]   (TIMEOUT_S: the binary is ended after it, with
#                                                      its process group; 0 = no limit)
set -uo pipefail
limit=$1
shift
name=$(basename "$1")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ "$limit" -gt 0 ]; then
  timeout --kill-after=5 "$limit" "$@" 2>&1 | tee "$log"
else
  "$@" 2>&1 | tee "$log"
fi
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 124 ] && echo "wb-test: $name ran past ${limit} s and was ended"
  echo "wb-test: $name failed (exit $rc)"
  exit 1
fi
# Qt Test's per-function lines: "PASS   : TestX::fn(row)", "SKIP   : TestX::fn() reason", ...
# initTestCase/cleanupTestCase passing says nothing about the functions.
results=$(grep -aE '^(PASS|SKIP|XFAIL|FAIL!|XPASS|BPASS|BFAIL) +: ' "$log" || true)
if echo "$results" | grep -qE '^(FAIL!|XPASS) '; then
  echo "wb-test: $name exited 0 but reported a failure"
  exit 1
fi
skipped=$(echo "$results" | grep -cE '^SKIP ' || true)
passed=$(echo "$results" | grep -E '^(PASS|XFAIL|BPASS|BFAIL) ' | grep -cvE '::(initTestCase|cleanupTestCase)\(' || true)
if [ "$passed" -eq 0 ] && [ "$skipped" -eq 0 ]; then
  echo "wb-test: $name exited 0 but printed no Qt Test result (no PASS or SKIP line)"
  exit 1
fi
if [ "$passed" -eq 0 ]; then
  echo "wb-test: $name: every test function skipped ($skipped)"
  exit 77
fi
if [ "$skipped" -gt 0 ]; then
  names=$(echo "$results" | sed -nE 's/^SKIP +: ([^ (]+).*/\1/p' | sort -u | paste -sd, - | sed 's/,/, /g')
  echo "wb-test: $name: $passed passed, $skipped skipped ($names)"
fi
exit 0
