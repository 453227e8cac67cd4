#!/usr/bin/env bash
# The HTML page of scenario B in a real browser (issue 13): headless Chromium loads it with
# no console error, and the SVG of the DOM it builds carries the memory ledger of the plan
# JSON, line by line (tests/browser_check.cmake). Exit 77 (ctest SKIP_RETURN_CODE) when no
# Chromium is installed; tests/setup.sh installs Debian's `chromium`.
# Usage: browser_test.sh PLANNER_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
planner=$1 source=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not installed: skipped (tests/setup.sh installs it)"
  exit 77
fi
mkdir -p "$work"
cd "$source"
"$planner" plan scenarios/b.json --format html > "$work/b.html"
"$planner" plan scenarios/b.json --format json --no-thresholds > "$work/b.json"
# A fresh profile each run; no sandbox (CI containers run as root), no GPU.
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile"
       --enable-logging=stderr --v=0 --no-first-run --hide-scrollbars)
# A browser that does not start fails the test with its own log, so CI shows why.
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$work/b.html" > "$work/dom.html" \
  2> "$work/dom.log" || { echo "chromium --dump-dom failed:"; tail -n 30 "$work/dom.log"; exit 1; }
timeout 120 "$browser" "${flags[@]}" --screenshot="$work/b.png" --window-size=1200,2000 \
  "file://$work/b.html" > /dev/null 2> "$work/screenshot.log" ||
  { echo "chromium --screenshot failed:"; tail -n 30 "$work/screenshot.log"; exit 1; }
if grep -E "Uncaught|ERROR:CONSOLE" "$work/dom.log" "$work/screenshot.log"; then
  echo "console errors while loading the page (above)"
  exit 1
fi
[ -s "$work/b.png" ] || { echo "no screenshot written"; exit 1; }
cmake -DDOM="$work/dom.html" -DJSON="$work/b.json" -P "$source/tests/browser_check.cmake"
