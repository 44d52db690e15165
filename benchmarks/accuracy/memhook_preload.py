"""Counting the CPU allocator's bytes with memhook/memhook.c from a script.

    import memhook_preload
    memhook_preload.reexec()        # first thing in main(): builds memhook.so
                                    # and re-runs the script with it preloaded
    hook = memhook_preload.counter()
    hook.vram_reset_peak(); base = hook.vram_live(); ...; hook.vram_peak() - base
"""
import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def reexec():
    """Re-runs this process with memhook.so preloaded, unless it already is."""
    if "LD_PRELOAD" in os.environ:
        return
    lib = pathlib.Path(tempfile.mkdtemp()) / "memhook.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(HERE / "memhook" / "memhook.c"),
                    "-ldl", "-lpthread"], check=True)
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, LD_PRELOAD=str(lib)))


def counter():
    """The preloaded library's vram_live / vram_peak / vram_reset_peak."""
    hook = ctypes.CDLL(None)
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    return hook
