#!/bin/bash
# Packs vram-opt for the lent GPU machine, which has the CUDA driver and
# toolkit and PyTorch but no LLVM 22: the built vram-opt and every shared
# library it loads beyond the C and C++ runtimes (libLLVM, libMLIR, libz3,
# ...), xz-compressed in .gpu-bundle/ (ignored by git; carry
# it), with a launcher that unpacks it once and runs vram-opt with those
# libraries, and only vram-opt (PyTorch keeps its own).
#
#   scripts/gpu-bundle.sh [BUILD_DIR]     (default: build-bundle)
#
# BUILD_DIR is configured without the ONNX and C++ front ends (the GPU
# check uses neither; libclang-cpp alone would not fit the 64 MiB a call
# carries).
#
# Then, on the device machine (the `run` tool, carry [".gpu-bundle"]):
#   VRAM_OPT=.gpu-bundle/vram-opt scripts/gpu-check.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bundle}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DVRAM_ENABLE_ONNX=OFF -DVRAM_ENABLE_CXX=OFF
fi
ninja -C "$BUILD" vram-opt
rm -rf .gpu-bundle
stage=$(mktemp -d)
mkdir -p .gpu-bundle "$stage/lib"
grep -qx '/.gpu-bundle/' .git/info/exclude 2>/dev/null ||
  echo '/.gpu-bundle/' >> .git/info/exclude
cp "$BUILD/bin/vram-opt" "$stage/"
ldd "$BUILD/bin/vram-opt" | awk '/=> \// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# libicudata is ICU's locale data (31 MB, 7.5 MB compressed), reached only
# through libxml2, which libLLVM links for Windows manifests: vram-opt never
# calls it. A stub defining the one symbol libicuuc takes from it keeps the
# bundle and the tree under the 64 MiB a call carries.
for icudata in "$stage"/lib/libicudata.so.*; do
  [ -e "$icudata" ] || continue
  sym=$(nm -D "$stage"/lib/libicuuc.so.* | awk '$1 == "U" && $2 ~ /^icudt/ {print $2}')
  echo "const char $sym[32];" |
    clang-22 -x c -shared -fPIC -Wl,-soname,"$(basename "$icudata")" -o "$icudata" -
done
# Nothing but the C and C++ runtimes may come from the machine it runs on.
LD_LIBRARY_PATH="$stage/lib" ldd "$stage/vram-opt" | awk '/=> \// {print $3}' |
  grep -v -e "^$stage/lib/" -e '/libc\.so' -e '/libm\.so' -e '/libgcc_s\.so' -e '/libstdc++\.so' &&
  { echo "gpu-bundle: libraries left outside the bundle (above)"; exit 1; }
tar -C "$stage" -cf - . | xz -T2 -9 > .gpu-bundle/vram-opt.tar.xz
rm -rf "$stage"
git rev-parse --short HEAD > .gpu-bundle/COMMIT
cat > .gpu-bundle/vram-opt <<'LAUNCHER'
#!/bin/sh
# Unpacks vram-opt.tar.xz once (python3's tarfile: no xz tool needed), then
# runs vram-opt with the libraries packed with it.
here=$(dirname "$(readlink -f "$0")")
dir=${VRAM_BUNDLE_DIR:-/tmp/vram-bundle-$(cat "$here/COMMIT")}
if [ ! -x "$dir/vram-opt" ]; then
  # filter='data' where tarfile has it (3.12 warns without one, on stderr).
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2],
    **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))' \
    "$here/vram-opt.tar.xz" "$dir.tmp" && mv "$dir.tmp" "$dir" || exit 1
fi
LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$dir/vram-opt" "$@"
LAUNCHER
chmod +x .gpu-bundle/vram-opt
ls -la .gpu-bundle
