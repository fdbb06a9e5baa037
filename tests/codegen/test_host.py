"""The host description ([Note: the host description without LLVM] in codegen/llvm/host.py):
LLVM's answer, kept on disk by the host's fingerprint, asked again when the host changes."""

import pytest

from codegen import disk_cache
from codegen.llvm import compiler, host
from minitorch import config

pytestmark = pytest.mark.extras("disk_cache")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and no description remembered in this process."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    disk_cache.reset()
    host.host_description.cache_clear()
    yield
    disk_cache.reset()
    host.host_description.cache_clear()


def test_the_description_is_llvms_asked_once_per_host(monkeypatch):
    first = host.host_description()
    assert first == compiler.describe_host()
    assert disk_cache.host_stats == {"miss": 1, "store": 1}
    host.host_description.cache_clear()  # as a new process would start

    def must_not_ask_llvm():
        raise AssertionError("asked LLVM, though the disk had this host's description")

    monkeypatch.setattr(compiler, "describe_host", must_not_ask_llvm)
    assert host.host_description() == first
    assert disk_cache.host_stats == {"miss": 1, "store": 1, "hit": 1}
    assert disk_cache.stats == {}  # compiled code's counts are apart


def test_another_host_asks_llvm_again(monkeypatch):
    first = host.host_description()
    host.host_description.cache_clear()
    monkeypatch.setattr(host, "host_fingerprint", lambda: "another CPU, or another llvmlite")
    monkeypatch.setattr(compiler, "describe_host", lambda: ("triple", "cpu", "+avx9", "0.0"))
    assert host.host_description() == ("triple", "cpu", "+avx9", "0.0") != first
    assert disk_cache.host_stats["store"] == 2


def test_the_fingerprint_changes_with_the_cpu_and_not_with_its_clock(tmp_path):
    def fingerprint_of(cpuinfo: str) -> str:
        (tmp_path / "cpuinfo").write_text(cpuinfo)
        return host.host_fingerprint(str(tmp_path / "cpuinfo"))

    cpu = "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: {mhz}\nflags\t\t: {flags}\n\n"
    base = fingerprint_of(cpu.format(mhz="2596.148", flags="sse2 avx2"))
    assert fingerprint_of(cpu.format(mhz="3001.000", flags="sse2 avx2")) == base
    assert fingerprint_of(cpu.format(mhz="2596.148", flags="sse2 avx2 avx512f")) != base
    second_processor = "processor\t: 1\nflags\t\t: sse2\n"
    assert fingerprint_of(cpu.format(mhz="1", flags="sse2 avx2") + second_processor) == base
    assert host.host_fingerprint(str(tmp_path / "no such file")) is None


def test_without_a_fingerprint_llvm_is_asked(monkeypatch):
    monkeypatch.setattr(host, "host_fingerprint", lambda: None)
    assert host.host_description() == compiler.describe_host()
    assert disk_cache.host_stats == {}


def test_without_the_disk_cache_llvm_is_asked(monkeypatch):
    monkeypatch.setattr(config, "disk_cache", False)
    assert host.host_description() == compiler.describe_host()
    assert disk_cache.host_stats == {}


def test_a_damaged_description_is_asked_again():
    description = host.host_description()
    key = disk_cache.cache_key("host_description", host.host_fingerprint())
    disk_cache._write(key, "host_description", b'{"not": "a list of strings"}')
    host.host_description.cache_clear()
    assert host.host_description() == description
    assert disk_cache.host_stats["store"] == 3  # the first, the damaged one, the one made again
