#!/usr/bin/env bash
# One command: install, build, and run every test (lit + FileCheck).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake --build "$BUILD_DIR" --target check-vram
