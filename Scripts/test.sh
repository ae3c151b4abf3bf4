#!/usr/bin/env bash
# The test command: installs what is missing, builds everything with the
# tests, fails on any compiler warning in this package's own code, runs the
# whole suite beside a private PostgreSQL cluster (Scripts/with-postgres.sh),
# then the test harness's package (Tools/) and the example service's
# (Examples/ActivityService) the same way.
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

# Skipped when arguments select some of the library's tests:
if [ "$#" -eq 0 ]; then
  # The test harness (Tools/, its own package on the library by path): the
  # tests with other processes and the fuzz corpora. Built with its tests,
  # warnings in its own code (and in the root's test helpers it links to)
  # fail, its tests run.
  tools=Tools
  swift build --build-tests --package-path "$tools" 2>&1 | tee "$log"
  if grep -E "^($root/)?($tools/)?(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log"; then
    echo "error: the build of $tools has warnings in its own code (above)" >&2
    exit 1
  fi
  swift test --skip-build --package-path "$tools"

  # The example service (Examples/ActivityService, its own package on the
  # library by path): built with its tests, warnings in its own code fail, its
  # tests run.
  example=Examples/ActivityService
  swift build --build-tests --package-path "$example" 2>&1 | tee "$log"
  if grep -E "^($root/)?$example/(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log"; then
    echo "error: the example service has warnings in its own code (above)" >&2
    exit 1
  fi
  swift test --skip-build --package-path "$example"
fi
