#!/usr/bin/env bash
# The test command of the README and of CI (.ci/run): install, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
jobs=$(nproc)

echo "== Release build (gcc) and tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" | tee build/ctest.log

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (clang) and tests"
# docs/testing.md §Sanitizers. Its own build directory and compiler: clang, RelWithDebInfo
# (optimised, so the suite stays fast, with line numbers in reports). Any report fails the
# test that triggers it (-fno-sanitize-recover=all in CMakeLists.txt).
stage=$SECONDS
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLANNER_SANITIZE=ON
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" | tee build-asan/ctest.log
echo "   sanitizer stage: $((SECONDS - stage)) s"

echo "== Fuzzing: libFuzzer + ASan + UBSan, the scenario harness 60 s and the CLI harness 20 s"
# docs/testing.md §Fuzzing (how to run longer). Seeds: scenarios/ and fuzz/seeds/; the corpus
# the run grows stays in build-fuzz/corpus for the next run. A crash, sanitizer report,
# uncaught exception, NaN or infinity in the output, or an input slower than 60 s fails the stage
# and leaves the input in build-fuzz/artifacts/. 60 s of this build (ASan, UBSan and coverage:
# about 13x slower than Release; fuzz/seeds/all_limits.json, a 16.8 M-GPU world, takes 3.3 s in
# Release and 44 s here) is about 4.6 s in Release, inside the 10 s every valid scenario must
# answer in (docs/testing.md §Fuzzing).
stage=$SECONDS
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLANNER_FUZZ=ON -DBUILD_TESTING=OFF
cmake --build build-fuzz -j "$jobs" --target fuzz_scenario fuzz_cli
mkdir -p build-fuzz/corpus build-fuzz/cli_corpus build-fuzz/artifacts
build-fuzz/fuzz/fuzz_scenario build-fuzz/corpus scenarios fuzz/seeds -dict=fuzz/planner.dict \
  -max_len=4096 -timeout=60 -rss_limit_mb=4096 -max_total_time=60 -print_final_stats=1 \
  -artifact_prefix=build-fuzz/artifacts/
# The command-line harness, briefly: its space (flags of memory and collective) is small.
build-fuzz/fuzz/fuzz_cli build-fuzz/cli_corpus fuzz/cli_seeds -dict=fuzz/cli.dict \
  -max_len=1024 -timeout=60 -rss_limit_mb=4096 -max_total_time=20 -print_final_stats=1 \
  -artifact_prefix=build-fuzz/artifacts/
echo "   fuzzing stage: $((SECONDS - stage)) s"

# One closing line for whoever reads the end of the log: the tests of both builds (every stage
# above stops the script on failure, so reaching here means none failed).
passed=0
for log in build/ctest.log build-asan/ctest.log; do
  n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log")
  passed=$((passed + ${n:-0}))
done
echo "tests: $passed passed, 0 failed"
