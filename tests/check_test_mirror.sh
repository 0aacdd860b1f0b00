#!/usr/bin/env bash
# Fails when a lib/ unit has no test at its mirrored path (lib/<dir>/<unit>.cpp ->
# tests/<dir>/test_<unit>.cpp) and does not say, in one line among its first five, where its
# behaviour is tested ("// Tested by tests/<path>.cpp ...", a file that must exist) or that it
# holds no logic of its own ("// No logic of its own: ..."). So a reader of any unit finds its
# tests, and a new unit cannot land untested in silence.
# Usage: tests/check_test_mirror.sh [project root]   (prints the count; exit 1 lists the culprits)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
mirrored=0 pointed=0 nologic=0 bad=()
while IFS= read -r -d '' unit; do
  rel=${unit#lib/}
  test_file="tests/$(dirname "$rel")/test_$(basename "$rel" .cpp).cpp"
  if [ -f "$test_file" ]; then mirrored=$((mirrored + 1)); continue; fi
  header=$(head -n 5 "$unit")
  if [[ $header =~ //\ Tested\ by\ (tests/[A-Za-z0-9_/.-]+\.(cpp|sh)) ]]; then
    if [ -f "${BASH_REMATCH[1]}" ]; then pointed=$((pointed + 1)); continue; fi
    bad+=("$unit: names ${BASH_REMATCH[1]}, which does not exist")
    continue
  fi
  if [[ $header == *"// No logic of its own"* ]]; then nologic=$((nologic + 1)); continue; fi
  bad+=("$unit: no $test_file and no '// Tested by tests/...' line at its top")
done < <(find lib -name '*.cpp' -print0 | sort -z)
echo "lib units: $mirrored with a mirrored test, $pointed pointing at their tests, $nologic without logic"
if [ ${#bad[@]} -gt 0 ]; then
  printf '%s\n' "${bad[@]}" >&2
  echo "${#bad[@]} lib units above have no test a reader can find: add tests/<dir>/test_<unit>.cpp" \
       "or a '// Tested by tests/<file>.cpp (what)' line among their first five" >&2
  exit 1
fi
