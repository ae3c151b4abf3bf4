#!/usr/bin/env bash
# The test command: installs what is missing, builds everything with the
# tests, fails on any compiler warning in this package's own code, runs the
# whole suite beside a private PostgreSQL cluster (Scripts/with-postgres.sh).
# Extra arguments go to `swift test` (e.g. --filter LMDBTests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash Scripts/install-dependencies.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^($root/)?(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log"; then
  echo "error: the build has warnings in this package's own code (above)" >&2
  exit 1
fi
# The shipping tests need a PostgreSQL server: a private one, stopped at the end.
bash Scripts/with-postgres.sh swift test --skip-build "$@"

# The example service (Examples/ActivityService, its own package on the
# library by path): built with its tests, warnings in its own code fail, its
# tests run. Skipped when arguments select some of the library's tests.
if [ "$#" -eq 0 ]; then
  example=Examples/ActivityService
  swift build --build-tests --package-path "$example" 2>&1 | tee "$log"
  if grep -E "^($root/)?$example/(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log"; then
    echo "error: the example service has warnings in its own code (above)" >&2
    exit 1
  fi
  swift test --skip-build --package-path "$example"
fi
