#!/usr/bin/env bash
# The test command of the README and of CI (.ci/run): install, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
jobs=$(nproc)

echo "== Release build (gcc) and tests"
stage=$SECONDS
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" | tee build/ctest.log
echo "   release stage: $((SECONDS - stage)) s"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (clang): the tests, then fuzzing"
# docs/testing.md §Sanitizers and §Fuzzing. One clang build serves both (RelWithDebInfo:
# optimised, so the suite stays fast, with line numbers in reports): the library is compiled
# once with ASan, UBSan and libFuzzer's coverage instrumentation (PLANNER_FUZZ), and the tests
# and the two fuzz harnesses link it. Any sanitizer report fails the test that triggers it
# (-fno-sanitize-recover=all in CMakeLists.txt).
stage=$SECONDS
# Line tables only (-gline-tables-only) instead of full debug information: the reports keep
# their file:line frames, and the build is faster.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DPLANNER_SANITIZE=ON -DPLANNER_FUZZ=ON
cmake --build build-asan -j "$jobs"
echo "   sanitizer build: $((SECONDS - stage)) s"
tests=$SECONDS
# The Release run's test times order this one, longest first: a fresh build directory has no
# timing data, and the slowest test (minutes under instrumentation) otherwise starts last.
mkdir -p build-asan/Testing/Temporary
cp build/Testing/Temporary/CTestCostData.txt build-asan/Testing/Temporary/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" | tee build-asan/ctest.log
echo "   sanitizer tests: $((SECONDS - tests)) s"

# Fuzzing, time-boxed: the scenario harness 45 s, the CLI harness 15 s, the inputs harness
# 20 s. Seeds: scenarios/ and
# fuzz/seeds/; the corpus the run grows stays in build-asan/corpus for the next run. A crash,
# sanitizer report, uncaught exception, NaN or infinity in the output, or an input slower than
# 60 s fails the stage and leaves the input in build-asan/artifacts/. 60 s of this build (ASan,
# UBSan and coverage: about 13x slower than Release; fuzz/seeds/all_limits.json, a 16.8 M-GPU
# world, takes 3.3 s in Release and 44 s here) is about 4.6 s in Release, inside the 10 s every
# valid scenario must answer in (docs/testing.md §Fuzzing).
fuzz=$SECONDS
mkdir -p build-asan/corpus build-asan/cli_corpus build-asan/artifacts
build-asan/fuzz/fuzz_scenario build-asan/corpus scenarios fuzz/seeds -dict=fuzz/planner.dict \
  -max_len=4096 -timeout=60 -rss_limit_mb=4096 -max_total_time=45 -print_final_stats=1 \
  -artifact_prefix=build-asan/artifacts/
# The command-line harness, briefly: its space (flags of memory and collective) is small.
build-asan/fuzz/fuzz_cli build-asan/cli_corpus fuzz/cli_seeds -dict=fuzz/cli.dict \
  -max_len=1024 -timeout=60 -rss_limit_mb=4096 -max_total_time=15 -print_final_stats=1 \
  -artifact_prefix=build-asan/artifacts/
# The other files the commands read: calibrate's inputs, import hf, validate's records.
mkdir -p build-asan/inputs_corpus
build-asan/fuzz/fuzz_inputs build-asan/inputs_corpus fuzz/input_seeds -dict=fuzz/inputs.dict \
  -max_len=8192 -timeout=60 -rss_limit_mb=4096 -max_total_time=20 -print_final_stats=1 \
  -artifact_prefix=build-asan/artifacts/
echo "   fuzzing: $((SECONDS - fuzz)) s"
echo "   sanitizer and fuzzing stage: $((SECONDS - stage)) s"

# One closing line for whoever reads the end of the log: the tests of both builds (every stage
# above stops the script on failure, so reaching here means none failed).
passed=0
for log in build/ctest.log build-asan/ctest.log; do
  n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log")
  passed=$((passed + ${n:-0}))
done
echo "tests: $passed passed, 0 failed"
