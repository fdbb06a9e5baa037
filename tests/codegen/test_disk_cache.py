"""The kernel cache on disk ([Note: the kernel cache on disk] in codegen/disk_cache.py): a new
process loads what an old one compiled; a damaged, truncated, foreign or stale entry is never
loaded but rebuilt; writers never leave half an entry; an unwritable folder turns it off."""

import ctypes
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from codegen import disk_cache
from codegen.llvm import jit as jit_module
from codegen.llvm.jit import compile_ir, disk_key
from minitorch import config
from minitorch.serialization import seal

pytestmark = pytest.mark.extras("disk_cache")

ROOT = Path(__file__).resolve().parents[2]

SCALE = """
define double @scale(double %x) {
  %y = fmul double %x, %K.0
  ret double %y
}
"""


def scale_ir(k: int) -> str:
    """A distinct kernel per k: scale(x) = k * x."""
    return SCALE.replace("%K", str(k))


def run_scale(k: int) -> float:
    return compile_ir(scale_ir(k)).function("scale", ctypes.c_double, ctypes.c_double)(2.0)


def entry_path(ir_text: str) -> Path:
    return disk_cache.directory() / disk_key(ir_text)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Each test gets an empty cache folder, no memory of a turned-off cache, and an empty
    in-memory compile cache (so that compile_ir goes to the disk)."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(config, "logs", {"kernel_cache"})
    disk_cache.reset()
    jit_module.clear_cache()
    yield tmp_path / "cache"
    disk_cache.reset()
    jit_module.clear_cache()


def test_store_then_load_round_trips_and_a_missing_key_is_a_miss():
    key = disk_cache.cache_key("some", "parts")
    assert disk_cache.load(key) is None
    disk_cache.store(key, b"\x7fELF and the rest")
    assert disk_cache.load(key) == b"\x7fELF and the rest"
    assert disk_cache.stats == {"miss": 1, "store": 1, "hit": 1}


def test_key_separates_its_parts():
    assert disk_cache.cache_key("ab", "c") != disk_cache.cache_key("a", "bc")


def test_another_compile_pipeline_does_not_load_the_old_code(monkeypatch):
    run_scale(8)
    jit_module.clear_cache()
    monkeypatch.setattr(jit_module, "_compiler_source", lambda: "other passes")
    assert run_scale(8) == 16.0
    assert disk_cache.stats["hit"] == 0 and disk_cache.stats["store"] == 2


def test_compiled_module_is_stored_then_loaded_instead_of_compiled(monkeypatch):
    assert run_scale(3) == 6.0
    assert entry_path(scale_ir(3)).exists()
    jit_module.clear_cache()
    monkeypatch.setattr(jit_module, "compile_object", _must_not_compile)
    assert run_scale(3) == 6.0  # from the disk
    assert disk_cache.stats["hit"] == 1


def _must_not_compile(ir_text: str) -> bytes:
    raise AssertionError("compiled, though the cache on disk had the object code")


def test_a_loaded_module_still_shows_its_optimized_ir_and_assembly():
    compile_ir(scale_ir(4))
    jit_module.clear_cache()
    loaded = compile_ir(scale_ir(4))
    assert disk_cache.stats["hit"] == 1
    assert "fmul double" in loaded.optimized_source
    assert "scale" in loaded.assembly()


# -- bad entries are rebuilt, never loaded ------------------------------------------------------


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # inside the object code: only the checksum can tell
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def stale_format(path: Path) -> None:
    key = path.name
    path.write_bytes(seal({"kind": "compiled_code", "format": 0, "key": key}, b"old code"))


def other_key(path: Path) -> None:
    path.write_bytes(
        seal(
            {"kind": "compiled_code", "format": disk_cache.FORMAT, "key": "0" * 64},
            b"someone else's code",
        )
    )


def empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    "damage, reason",
    [
        (flip_last_byte, "checksum mismatch"),
        (truncate, "truncated"),
        (stale_format, "format 0"),
        (other_key, "belongs to key '000"),
        (empty, "not a minitorch saved program"),
    ],
)
def test_a_bad_entry_is_removed_logged_and_rebuilt(damage, reason, capsys):
    assert run_scale(5) == 10.0
    path = entry_path(scale_ir(5))
    good = path.read_bytes()
    damage(path)
    jit_module.clear_cache()
    assert run_scale(5) == 10.0  # compiled again, not loaded
    assert disk_cache.stats["rejected"] == 1 and disk_cache.stats["hit"] == 0
    assert reason in capsys.readouterr().err
    assert path.read_bytes() == good  # rebuilt: the same bytes as the first compile


# -- writers and folders ------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys
    from codegen import disk_cache
    from minitorch import config
    config.cache_dir = sys.argv[1]
    payload = sys.argv[2].encode() * 50_000  # ~50 KB: a write takes more than one syscall
    for _ in range(100):
        disk_cache.store("k" * 64, payload)
""")


def test_concurrent_writers_never_leave_half_an_entry(cache):
    key = "k" * 64
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(cache), name], cwd=ROOT, env=_env(cache)
        )
        for name in ("a", "b")
    ]
    seen = set()
    while any(w.poll() is None for w in writers):
        payload = disk_cache.load(key)
        if payload is not None:
            seen.add(payload[:1])
            assert payload in (b"a" * 50_000, b"b" * 50_000)
    assert all(w.wait() == 0 for w in writers)
    assert disk_cache.stats["rejected"] == 0
    assert disk_cache.load(key) in (b"a" * 50_000, b"b" * 50_000)
    assert not [p for p in cache.rglob("*.tmp")]  # no temporary file left behind


def test_threads_storing_one_key_at_once():
    key = disk_cache.cache_key("threads")
    barrier = threading.Barrier(4)

    def store(k: int) -> None:
        barrier.wait()
        disk_cache.store(key, bytes([k]) * 10_000)

    threads = [threading.Thread(target=store, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert disk_cache.load(key) in {bytes([k]) * 10_000 for k in range(4)}


def test_an_unwritable_folder_turns_the_cache_off_and_compiling_still_works(tmp_path, capsys):
    (tmp_path / "a file").write_text("not a folder")
    config.cache_dir = str(tmp_path / "a file" / "cache")  # the monkeypatch restores it
    assert run_scale(6) == 12.0
    assert disk_cache.directory() is None
    assert "the kernel cache on disk is off for this process" in capsys.readouterr().err
    jit_module.clear_cache()
    assert run_scale(6) == 12.0


def test_a_failed_write_stores_nothing_and_leaves_the_cache_on(cache, monkeypatch, capsys):
    def disk_full(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    assert run_scale(9) == 18.0
    assert "No space left on device" in capsys.readouterr().err
    assert disk_cache.directory() is not None and disk_cache.stats["store"] == 0
    # The folder, and no entry or temporary file in it:
    assert [p.name for p in cache.rglob("*")] == [f"compiled-v{disk_cache.FORMAT}"]


def test_config_turns_the_cache_off(cache, monkeypatch):
    monkeypatch.setattr(config, "disk_cache", False)
    assert run_scale(7) == 14.0
    assert not cache.exists()


@pytest.mark.parametrize(
    "variables, expected",
    [
        ({"XDG_CACHE_HOME": "/xdg"}, ["/xdg/minitorch", "True"]),
        ({"XDG_CACHE_HOME": "/xdg", "MINITORCH_CACHE_DIR": "/mine"}, ["/mine", "True"]),
        ({"HOME": "/home/someone"}, ["/home/someone/.cache/minitorch", "True"]),
        ({"HOME": "/h", "MINITORCH_DISK_CACHE": "0"}, ["/h/.cache/minitorch", "False"]),
    ],
)
def test_where_the_cache_lives_and_whether_it_is_on(variables, expected):
    env = {
        k: v
        for k, v in _env(Path()).items()
        if k not in ("MINITORCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME")
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from minitorch import config; print(config.cache_dir, config.disk_cache)",
        ],
        cwd=ROOT,
        env={**env, **variables},
        capture_output=True,
        text=True,
    )
    assert done.stdout.split() == expected, done.stderr


# -- a new process --------------------------------------------------------------------------

SIN_COS = textwrap.dedent("""
    import json
    import sys
    import numpy as np
    import minitorch
    from codegen import disk_cache
    x = np.array([0.5, -3.0, 1e7, 3e9, -1e20, 1e300 / 1e290, np.inf, np.nan], np.float32)
    f = minitorch.compile(lambda t: minitorch.sin(t) * 2 + minitorch.cos(t))
    got = f(minitorch.tensor(x)).numpy()
    want = (np.sin(x.astype(np.float64)) * 2 + np.cos(x.astype(np.float64))).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    print("llvmlite.binding" in sys.modules, "llvmlite.ir" in sys.modules)
    print(json.dumps(disk_cache.stats))
""")


def run_in_new_process(cache: Path) -> dict[str, int]:
    """What the kernel cache did in a new process running sin and cos compiled."""
    return run_with_llvm_or_not(cache)[0]


def run_with_llvm_or_not(cache: Path) -> tuple[dict[str, int], bool, bool]:
    """The same, whether the process imported LLVM (llvmlite.binding), and whether it
    generated IR (llvmlite.ir)."""
    done = subprocess.run(
        [sys.executable, "-c", SIN_COS],
        cwd=ROOT,
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    *_, imported, stats = done.stdout.strip().splitlines()
    imported_llvm, imported_ir = imported.split()
    return json.loads(stats), imported_llvm == "True", imported_ir == "True"


def test_a_new_process_loads_the_kernels_and_the_trig_library_from_the_cache(cache):
    first, first_imported_llvm, _ = run_with_llvm_or_not(cache)
    assert first.get("hit", 0) == 0 and first["store"] >= 2  # the trig library and a kernel
    assert first_imported_llvm  # it compiled
    second, second_imported_llvm, second_made_ir = run_with_llvm_or_not(cache)
    assert second == {"hit": first["store"]}  # nothing compiled: everything loaded
    assert not second_imported_llvm  # nor LLVM imported ([Note: a warm start without LLVM])
    assert not second_made_ir  # nor any IR made ([Note: a key made before the IR])


def test_a_damaged_trig_library_is_rebuilt_in_the_next_process(cache):
    first = run_in_new_process(cache)
    for path in (cache / f"compiled-v{disk_cache.FORMAT}").iterdir():
        flip_last_byte(path)  # the library's entry and the kernel's
    second = run_in_new_process(cache)
    assert second["rejected"] == first["store"] and second["store"] == first["store"]
    assert run_in_new_process(cache) == {"hit": first["store"]}


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ, MINITORCH_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("MINITORCH_LOGS", None)
    env.pop("MINITORCH_CORE", None)  # the process runs with its extras on: the cache's path
    return env
