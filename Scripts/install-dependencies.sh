#!/usr/bin/env bash
# Installs the system packages the build and the tests need, only those missing.
# Debian/Ubuntu, as root (or with sudo on the PATH). The Swift toolchain (6.1 or
# later) must already be installed.
set -euo pipefail
# postgresql: the server the shipping tests run against (Scripts/with-postgres.sh).
packages=(pkg-config liblmdb-dev libicu-dev libzstd-dev python3-lmdb python3-zstandard gzip postgresql)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "swift is not on the PATH: install a Swift 6.1+ toolchain first" >&2; exit 1; }
