"""A worker's start: its zygote ready before the slow preloads, the allow-list the same whatever the
zygote imported first, and every sandbox on its worker's core, the first one too."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.grade import allowlist
from attnlab.grade.runner import Limits
from attnlab.grade.session import Output, Zygote
from in_sandbox import run

ROOT = os.geteuid() == 0
CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


@pytest.fixture(scope="module")
def zygote():
    """A worker's zygote for the kit's assignment (``sandbox.yaml``: matplotlib, pyplot preloaded),
    on the last core."""
    from attnlab.grade import worker

    config = {
        "tests_dir": str(paths.tests_dir()),
        "limits": Limits().__dict__,
        "isolate": True,
        "cpu": CORES[-1] if CORES else None,
    }
    z = Zygote.of(worker.launch_zygote(config))
    yield z
    z.close()


def _cores_of(pid: int) -> str:
    with open(f"/proc/{pid}/status") as f:
        return next(line.split(":", 1)[1].strip() for line in f if line.startswith("Cpus_allowed_list:"))


# what the zygote imports after it is ready (sandbox.DEFERRED and the assignment's preload), and
# what those bring along that needs a shared library of its own (hashlib: libcrypto; uuid: libuuid)
DEFERRED_IMPORTS = """
import sys
PRELOADED = "matplotlib.pyplot" in sys.modules
import hashlib, io, uuid
import numpy as np
import numpy.testing
import matplotlib
import matplotlib.pyplot as plt
from IPython.core.inputtransformer2 import TransformerManager

def probe():
    numpy.testing.assert_allclose(np.ones(3), np.ones(3))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    png = io.BytesIO()
    fig.savefig(png, format="png")
    magic = TransformerManager().transform_cell("%matplotlib inline\\nx = 1\\n")
    digest = hashlib.sha256(b"x").hexdigest()[:8]
    return PRELOADED, matplotlib.get_backend().lower(), png.getvalue()[:4], "x = 1" in magic, digest, len(str(uuid.uuid4()))
"""


@pytest.mark.skipif(len(CORES) < 2, reason="needs two cores to tell a pinned sandbox from one that is not")
def test_is_a_worker_s_first_sandbox_on_its_core_like_the_next():
    """The first sandbox (the zygote's trial, forked while the zygote starts) ran on any core while
    the worker pinned only itself and its zygote once ready: its round trips crossed cores."""
    from attnlab.grade import worker

    cpu = CORES[0]
    config = {"tests_dir": str(paths.tests_dir()), "limits": Limits().__dict__, "isolate": True, "cpu": cpu}
    z = Zygote.of(worker.launch_zygote(config))
    try:
        assert z.mode in ("root", "userns", "landlock", "none")
        seen = []
        for _ in range(2):
            sb = z.spawn(Output())
            seen.append(_cores_of(sb.pid))
            sb.kill()
    finally:
        z.close()
    assert seen == [str(cpu), str(cpu)]


def test_can_the_first_sandbox_import_what_the_zygote_imports_after_it(zygote):
    """The first sandbox is forked before the deferred preloads; the allow-list must still hold
    every file they need, and the sandboxes forked after them have them already."""
    expected = ("agg", b"\x89PNG", True, "2d711642", 36)
    first, found = run(zygote, DEFERRED_IMPORTS, timeout=60)
    first.kill()
    assert found[0] is False or zygote.mode not in ("root", "userns")  # only namespace modes keep the trial
    assert tuple(found[1:]) == expected
    later, found = run(zygote, DEFERRED_IMPORTS, timeout=60)
    later.kill()
    assert tuple(found) == (True, *expected)


VIEW = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("allowlist", sys.argv[1])
allowlist = importlib.util.module_from_spec(spec)
spec.loader.exec_module(allowlist)
import numpy
for name in sys.argv[2:]:
    __import__(name)
print(json.dumps(allowlist.view(["numpy", "matplotlib"])))
"""


def test_is_the_allow_list_the_same_whatever_the_zygote_imported_first():
    """The zygote computes it before its slow preloads: what they load must be in it already."""

    def view(*imports: str) -> list:
        out = subprocess.run(
            [sys.executable, "-c", VIEW, allowlist.__file__, *imports],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, MPLBACKEND="Agg"),
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    bare = view()
    preloaded = view("numpy.testing", "IPython.core.inputtransformer2", "matplotlib.pyplot", "hashlib", "uuid")
    assert bare == preloaded


def test_does_the_loader_s_search_find_what_a_library_needs(tmp_path):
    """A shared object's needs, by the paths the loader opens (a link as named, and its target)."""
    import _ctypes

    needed = allowlist.needed_libraries([_ctypes.__file__])
    named = {os.path.basename(p) for p in needed}
    assert any(n.startswith("libffi.so.") for n in named) or not any("ffi" in n for n in named)
    libc = [p for p in needed if os.path.basename(p) == "libc.so.6"]
    assert libc and all(os.path.isfile(p) for p in libc)
    # a file that is not a shared object needs nothing, and is no error
    (tmp_path / "fake.so").write_text("not ELF")
    assert allowlist.needed_libraries([str(tmp_path / "fake.so")]) == set()


def test_does_the_cache_list_every_library_the_loader_knows():
    cache = allowlist.ld_cache()
    if not Path(allowlist.LD_CACHE).is_file():
        pytest.skip("no /etc/ld.so.cache here")
    assert "libc.so.6" in cache and all(os.path.isabs(p) for p in cache["libc.so.6"])


def test_is_a_sandbox_asked_for_while_the_preloads_import_forked_once_they_are_done():
    """The second sandbox is asked for at once, while the zygote's thread still imports pyplot
    (which takes logging's lock, among others): it must come, with pyplot, not hang or half-done."""
    from attnlab.grade import worker

    config = {"tests_dir": str(paths.tests_dir()), "limits": Limits().__dict__, "isolate": True}
    z = Zygote.of(worker.launch_zygote(config))
    try:
        first = z.spawn(Output())
        second, found = run(
            z,
            "import sys\nPRELOADED = 'matplotlib.pyplot' in sys.modules\ndef probe():\n    return PRELOADED\n",
            timeout=60,
        )
        first.kill()
        second.kill()
    finally:
        z.close()
    assert found is True


@pytest.mark.parametrize("module", ["attnlab.grade.worker", "attnlab.grade.batch", "attnlab.grade.launch"])
def test_does_a_grading_run_start_its_processes_before_it_imports_numpy(module):
    """The batch starts its workers, and a worker its zygote, before the engine (numpy, a few tenths
    of a second) is imported: each then gets ready while its parent imports."""
    code = f"import sys, {module}; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
