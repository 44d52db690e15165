#!/usr/bin/env bash
# The sanitizer job (CI runs it after the tests): builds vram-opt with
# AddressSanitizer and UndefinedBehaviorSanitizer in
# ./build-asan (no JIT execution: its tests are too slow instrumented) and
# runs the analysis, importer, report and bad-input tests there; the first
# report fails the run (test/lit.cfg.py sets halt_on_error=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-build
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1: the sanitizers' usual level, and a shorter build than -O3.
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DVRAM_SANITIZE="address;undefined" -DVRAM_ENABLE_EXECUTION=OFF >/dev/null
fi
# The fuzz targets are instrumented in every build (tools/CMakeLists.txt)
# and run by check-vram: only vram-opt is built here.
cmake --build "$BUILD_DIR" --target vram-opt
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" \
  --filter '^VRAM :: (Analysis|Dialect|Import|Transforms|Report|Lint|Zoo|vram-opt)/'
