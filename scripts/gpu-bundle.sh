#!/bin/bash
# Builds a self-contained vram-opt for the lent GPU machine, which has the
# CUDA driver, the toolkit and PyTorch but no LLVM 22: LLVM and MLIR linked
# statically (VRAM_STATIC_LLVM; no ONNX or C++ front end, which the GPU
# check does not use), stripped, in .gpu-bundle/ (ignored by git; carry it).
#
#   scripts/gpu-bundle.sh [BUILD_DIR]     (default: build-static)
#
# Then, on the device machine (the `run` tool, carry [".gpu-bundle"]):
#   VRAM_OPT=.gpu-bundle/vram-opt scripts/gpu-check.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-static}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DVRAM_STATIC_LLVM=ON -DVRAM_ENABLE_ONNX=OFF -DVRAM_ENABLE_CXX=OFF \
    "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -Wl,--gc-sections"
fi
ninja -C "$BUILD" vram-opt
mkdir -p .gpu-bundle
grep -qx '/.gpu-bundle/' .git/info/exclude 2>/dev/null ||
  echo '/.gpu-bundle/' >> .git/info/exclude
strip -o .gpu-bundle/vram-opt "$BUILD/bin/vram-opt"
# Anything it needs beyond the C library and libstdc++ goes along.
ldd .gpu-bundle/vram-opt | awk '/=> \// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|ld-linux*|libdl.so*|libpthread.so*|librt.so*) ;;
    *) cp -L "$lib" .gpu-bundle/ ;;
  esac
done
git rev-parse --short HEAD > .gpu-bundle/COMMIT
ls -la .gpu-bundle
du -sh .gpu-bundle
