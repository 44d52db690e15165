#!/usr/bin/env bash
# Installs what vram-opt needs on Debian 12 (idempotent), then configures and
# builds it in ./build (not with --no-build). Run by quickstart.sh, test.sh
# and sanitize.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build ccache clang-22 libclang-rt-22-dev llvm-22-dev llvm-22-tools libmlir-22-dev
  mlir-22-tools libclang-22-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libbenchmark-dev python3 chromium libtorch-dev libzip-dev libmimalloc-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# --no-build: the packages only (scripts/sanitize.sh builds its own tree).
[ "${1:-}" = "--no-build" ] && exit 0

BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
cmake --build "$BUILD_DIR" --target vram-opt
