#!/usr/bin/env bash
# Fails when a doctest case name holds a ';': CTest's discovery splits such a name into two
# entries whose filters match no case, so the case would never run while CTest reports it passed.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")" && pwd)}
if grep -rnE 'TEST_CASE\("[^"]*;' "$root" --include='*.cpp'; then
  echo "test case names above contain ';' (CTest would split them and run nothing): use ','" >&2
  exit 1
fi
echo "no test case name contains ';'"
