#!/usr/bin/env bash
# One command: install, build, and report one training step of ResNet-50.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/bin/vram-opt" --zoo=resnet50 --batch=32 --mode=train --optimizer=adam --format=text
