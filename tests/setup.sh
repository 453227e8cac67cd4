#!/usr/bin/env bash
# Installs what the planner needs to build and test, from Debian's packages (bookworm).
set -euo pipefail
packages=(cmake ninja-build g++ clang libcli11-dev nlohmann-json3-dev libfmt-dev catch2 libbenchmark-dev
          chromium)  # chromium: the HTML page's browser test (tests/browser_test.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
"${as_root[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y "${missing[@]}"
