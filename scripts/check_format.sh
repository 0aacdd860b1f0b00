#!/usr/bin/env bash
# Fails when a tracked C++ file differs from .clang-format's layout (scripts/test.sh runs it, so CI
# does). Fix with: git ls-files '*.h' '*.cpp' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu')
if ! clang-format --dry-run --Werror "${files[@]}" 2> /tmp/trainer-format.$$; then
  grep 'error:' /tmp/trainer-format.$$ | cut -d: -f1 | sort -u | sed 's/^/[format] not clang-formatted: /'
  rm -f /tmp/trainer-format.$$
  exit 1
fi
rm -f /tmp/trainer-format.$$
echo "[format] ${#files[@]} files clang-formatted"
