# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "VRAM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "check-json.py", "check-sarif.py", "check-schema.py", "compare-npy.py", "generate_mlp.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.vram_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# Compares JSON report fields with references and tolerances.
config.substitutions.append(("%check-sarif", "python3 " + os.path.join(os.path.dirname(__file__), "check-sarif.py")))
config.substitutions.append(("%check-json", "python3 " + os.path.join(os.path.dirname(__file__), "check-json.py")))
# Compares .npy files (vram-opt --dump against PyTorch's), stdlib only.
config.substitutions.append(("%compare-npy", "python3 " + os.path.join(os.path.dirname(__file__), "Execution", "compare-npy.py")))
config.substitutions.append(("%vram_obj_root", config.vram_obj_root))
config.substitutions.append(("%vram_src_root", config.vram_src_root))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%truth", os.path.join(config.vram_src_root, "test", "Inputs", "truth")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "PATH"])
llvm_config.use_default_substitutions()

tool_dirs = [config.vram_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["vram-opt", "vram-unittests"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.vram_tools_dir, append_path=True)

# A sanitized build (VRAM_SANITIZE): the first report fails the test.
# Debian's uninstrumented libMLIR.so shares the BumpPtrAllocator's poisoning
# with our instrumented code (false use-after-poison): user poisoning is off.
if config.vram_sanitize:
    config.available_features.add("sanitizer")
    config.environment["ASAN_OPTIONS"] = "allow_user_poisoning=0:halt_on_error=1:abort_on_error=0:detect_leaks=1"
    config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    config.environment["LSAN_OPTIONS"] = "suppressions=" + os.path.join(os.path.dirname(__file__), "lsan.supp")

if config.vram_enable_onnx:
    config.available_features.add("onnx")
# --validate=cpu (MLIR's ExecutionEngine).
if config.vram_enable_execution:
    config.available_features.add("execution")

# --validate=gpu is built (cuda.h found): its runtime can be driven by the
# test double of libcuda (Execution/Inputs/fake-libcuda.c), compiled by the
# C compiler of the build.
if config.vram_enable_execution and config.vram_cuda_include and \
        os.path.exists(os.path.join(config.vram_cuda_include, "cuda.h")):
    config.available_features.add("cuda-runtime")
    config.substitutions.append(("%cc-fake-libcuda", "%s -shared -fPIC -I%s -o" % (
        config.vram_c_compiler, config.vram_cuda_include)))

# --gpu-binary=cubin: gpu-module-to-binary runs the CUDA toolkit's ptxas
# (on PATH or under the toolkit MLIR was configured with, /usr/local/cuda).
import shutil
if shutil.which("ptxas") or os.path.exists(os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")):
    config.available_features.add("ptxas")
config.substitutions.append(("%for-each-model", "python3 " + os.path.join(
    os.path.dirname(__file__), "Execution", "Inputs", "for-each-model.py")))

# --validate=gpu needs a CUDA device: vram-opt's own probe (the driver
# through dlopen) decides, and says why not.
import subprocess
try:
    probe = subprocess.run(
        [os.path.join(config.vram_tools_dir, "vram-opt"), "--list-cuda-devices"],
        capture_output=True, text=True, timeout=60)
    if probe.returncode == 0 and probe.stdout.strip():
        config.available_features.add("cuda-device")
        lit_config.note("CUDA device: " + probe.stdout.strip().splitlines()[0])
    else:
        lit_config.note("the GPU tests are skipped: " +
                        (probe.stderr.strip() or probe.stdout.strip() or "no output"))
except (OSError, subprocess.TimeoutExpired) as e:
    lit_config.note("the GPU tests are skipped: cannot run vram-opt --list-cuda-devices: " + str(e))

# The LibTorch C++ front end parses real LibTorch programs: its tests need
# libtorch-dev's headers (and its libraries to cross-check by running them).
if config.vram_enable_cxx:
    config.available_features.add("cxx")
# The compiler vram-opt was built with (a C++ user of the installed library
# compiles with it too).
config.substitutions.append(("%build_cxx", config.vram_cxx_compiler))
if config.vram_enable_cxx and config.vram_libtorch:
    config.available_features.add("libtorch")
    torch_include = config.vram_libtorch_include
    config.substitutions.append(("%libtorch_cflags", "-std=c++17 -isystem " + torch_include))
    config.substitutions.append(("%libtorch_ldflags", "-ltorch -ltorch_cpu -lc10"))
    config.substitutions.append(("%cxx", config.vram_cxx_compiler))
else:
    lit_config.note("libtorch-dev not found: the C++ front end tests are skipped")

# The libFuzzer targets are built only by a clang with -fsanitize=fuzzer.
fuzzers = [f for f in ["vram-onnx-fuzz", "vram-mlir-fuzz", "vram-baseline-fuzz", "vram-hf-fuzz", "vram-pt2-fuzz"]
           if os.path.exists(os.path.join(config.vram_tools_dir, f))]
if fuzzers:
    config.available_features.add("fuzzer")
    llvm_config.add_tool_substitutions(fuzzers, tool_dirs)

# Headless Chromium renders the HTML report (CI installs it; locally the
# test is skipped when it is absent).
import shutil
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(("%chromium", chromium))
else:
    lit_config.note("chromium not found: the HTML rendering test is skipped")

# The JSON report's schema (docs/report.schema.json) is checked with the
# jsonschema module of the python3 the tests run; without it the schema test
# is skipped.
import subprocess
if subprocess.run(["python3", "-c", "import jsonschema"],
                  capture_output=True).returncode == 0:
    config.available_features.add("jsonschema")
    config.substitutions.append(("%check-schema", "python3 " + os.path.join(
        os.path.dirname(__file__), "check-schema.py")))
else:
    lit_config.note("python3 has no jsonschema module: the report schema "
                    "test is skipped")
