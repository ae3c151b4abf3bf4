#!/usr/bin/env bash
# The main job: installs what is missing, builds `eventlog` in release mode and
# runs its demo: a fresh store on the embedded default, a coffee-shop sample of
# activities and items applied, the views printed, searched, verified.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash Scripts/install-dependencies.sh
swift build -c release --product eventlog
exec "$root/.build/release/eventlog" demo "$@"
