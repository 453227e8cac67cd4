#!/usr/bin/env bash
# The test command of the README and of CI (.ci/run): install, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
jobs=$(nproc)

echo "== Release build (gcc) and tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
