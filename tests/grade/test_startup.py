"""A worker's start: its zygote imports a slow optional module only for a submission that is going to
use it, the allow-list is the same whatever the zygote imported first, and every sandbox runs on its
worker's core, the first one too."""

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
    """A worker's zygote for the kit's assignment (``sandbox.yaml``: matplotlib, pyplot optional),
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


# the zygote's optional modules (preloads.OPTIONAL and the assignment's preload), and what those
# bring along that needs a shared library of its own (hashlib: libcrypto; uuid: libuuid)
OPTIONAL = ["numpy.testing", "IPython.core.inputtransformer2", "matplotlib.pyplot"]
OPTIONAL_IMPORTS = """
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


def test_can_a_sandbox_import_the_optional_modules_itself_and_have_them_once_wanted(zygote):
    """A submission whose text names none of them (an import by a name built at run time) imports
    them in its sandbox: the allow-list must hold every file they need. One that names them gets a
    sandbox forked after the zygote imported them."""
    assert sorted(zygote.optional) == sorted(OPTIONAL)
    expected = ("agg", b"\x89PNG", True, "2d711642", 36)
    first, found = run(zygote, OPTIONAL_IMPORTS, timeout=60)
    first.kill()
    assert tuple(found) == (False, *expected)
    later, found = run(zygote, OPTIONAL_IMPORTS, timeout=60, wants=OPTIONAL)
    later.kill()
    assert tuple(found) == (True, *expected)


SIGNATURE = """
import inspect, itertools, tokenize
def compiled():
    return tokenize._compile.cache_info().currsize
before = compiled()
inspect.signature(itertools.permutations)
def probe():
    return before, compiled()
"""


def test_does_a_sandbox_read_a_builtins_signature_without_compiling_the_tokenizer_again(zygote):
    """The names a submission defines are sent with their signatures; a builtin's (say an imported
    ``itertools.permutations``) has the tokenizer compile its regular expressions, about 11 ms of
    every sandbox until the zygote did it once before the forks (up to Python 3.11; later ones
    parse it without them, and nothing is compiled either way)."""
    sb, (before, after) = run(zygote, SIGNATURE)
    sb.kill()
    assert after == before


LOADED = """
import sys
LOADED = sorted(name for name in ("numpy.testing", "IPython.core.inputtransformer2", "matplotlib") if name in sys.modules)
def probe():
    return LOADED
"""


def test_does_the_zygote_import_an_optional_module_only_for_a_submission_that_wants_it():
    """Sandboxes asked for with nothing wanted have none of the slow optional modules, however many
    there were; the first that wants pyplot has it, though a spare sandbox was forked before the
    zygote imported it (that spare is ended, not handed out); and every later sandbox has it."""
    from attnlab.grade import worker

    config = {"tests_dir": str(paths.tests_dir()), "limits": Limits().__dict__, "isolate": True}
    z = Zygote.of(worker.launch_zygote(config))
    seen = []
    try:
        for wants in (None, None, None, ["matplotlib.pyplot"], None):
            sb, found = run(z, LOADED, timeout=60, wants=wants)
            sb.kill()
            seen.append(found)
    finally:
        z.close()
    assert seen == [[], [], [], ["matplotlib"], ["matplotlib"]]


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
    """The zygote computes it before it imports any optional module: what they load must be in it
    already."""

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


def test_does_the_allow_list_find_the_distributions_that_importlib_metadata_finds(tmp_path, monkeypatch):
    """The zygote reads ``.dist-info`` folders itself, without importlib.metadata (whose import is a
    tenth of its start): the same ones, under any spelling of a name, the first along the path
    winning, and a distribution in another form (an ``.egg-info``) through importlib.metadata."""
    from importlib import metadata

    def dist(folder: Path, name: str, *requires: str) -> None:
        folder.mkdir(parents=True)
        lines = [f"Name: {name}", f"Version: {folder.parent.name}", *(f"Requires-Dist: {r}" for r in requires)]
        (folder / ("PKG-INFO" if folder.suffix == ".egg-info" else "METADATA")).write_text("\n".join(lines) + "\n")

    first, second = tmp_path / "first", tmp_path / "second"
    dist(first / "Some_Pkg-1.0.dist-info", "some-pkg", "other.pkg (>=1)", "left-out ; extra == 'docs'")
    dist(second / "some_pkg-2.0.dist-info", "some-pkg")
    dist(second / "other_pkg-1.0.dist-info", "other.pkg", "an-egg")
    dist(first / "an_egg-1.0.egg-info", "an-egg")
    dist(first / "left_out-1.0.dist-info", "left-out")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))

    found = allowlist.distributions(["SOME.PKG"])
    expected = [metadata.distribution(name) for name in ("some-pkg", "other-pkg", "an-egg")]
    assert sorted(d.read_text("METADATA") or d.read_text("PKG-INFO") for d in found) == sorted(
        d.read_text("METADATA") or d.read_text("PKG-INFO") for d in expected
    )
    assert sum(isinstance(d, allowlist.DistInfo) for d in found) == 2  # read without importlib.metadata


def test_does_an_absolute_path_in_a_record_keep_the_site_folder_out_of_the_view(tmp_path):
    """A RECORD names a distribution's files relative to its site folder; a line naming a file by
    its absolute path (a hand-made or foreign installer's) is no top-level entry of that folder, and
    must not bind the whole folder, with the kit's solution and hidden tests beside the package."""
    site_folder = tmp_path / "site-packages"
    (site_folder / "pkg").mkdir(parents=True)
    (site_folder / "pkg" / "__init__.py").write_text("")
    info = site_folder / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("pkg/__init__.py,,\n/etc/hostname,,\npkg-1.0.dist-info/RECORD,,\n")

    tops, _ = allowlist.package_files(allowlist.DistInfo(str(info)))
    assert str(site_folder.resolve()) not in tops
    assert str((site_folder / "pkg").resolve()) in tops


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


@pytest.mark.parametrize("module", ["attnlab.grade.worker", "attnlab.grade.batch", "attnlab.grade.launch"])
def test_does_a_grading_run_start_its_processes_before_it_imports_numpy(module):
    """The batch starts its workers, and a worker its zygote, before the engine (numpy, a few tenths
    of a second) is imported: each then gets ready while its parent imports."""
    code = f"import sys, {module}; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
