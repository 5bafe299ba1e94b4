"""Does the harness that runs the reference, real ``otter run``, start a run again only when otter's
kernel died at start-up (the reference's own race), and report any other failure at once?"""

import sys

import pytest


def _fake_otter(tmp_path, monkeypatch, *, failures: int, message: str):
    """An ``otter`` that prints ``message`` and writes nothing on its first ``failures`` starts, then
    writes a results.json: it counts its starts in a file."""
    import otter_runs

    starts = tmp_path / "starts"
    fake = tmp_path / "otter"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        f"starts = pathlib.Path({str(starts)!r})\n"
        "n = int(starts.read_text()) + 1 if starts.exists() else 1\n"
        "starts.write_text(str(n))\n"
        f"if n <= {failures}:\n"
        f"    print({message!r}); sys.exit(1)\n"
        "out = pathlib.Path(sys.argv[sys.argv.index('-o') + 1])\n"
        "(out / 'results.json').write_text('{\"tests\": []}')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(otter_runs, "OTTER", fake)
    return starts


@pytest.mark.parametrize(
    "message",
    ["RuntimeError: Kernel died before replying to kernel_info", "RuntimeError: Kernel didn't respond in 60 seconds"],
)
def test_is_a_reference_run_whose_kernel_failed_at_start_up_run_again(tmp_path, monkeypatch, message):
    from otter_runs import otter_results

    starts = _fake_otter(tmp_path, monkeypatch, failures=2, message=message)
    assert otter_results(tmp_path / "a.zip", tmp_path / "s.py", tmp_path / "work") == {"tests": []}
    assert starts.read_text() == "3"


def test_is_a_reference_run_that_failed_otherwise_reported_at_once(tmp_path, monkeypatch):
    from otter_runs import otter_results

    starts = _fake_otter(tmp_path, monkeypatch, failures=1, message="ModuleNotFoundError: no module named x")
    with pytest.raises(AssertionError, match="ModuleNotFoundError"):
        otter_results(tmp_path / "a.zip", tmp_path / "s.py", tmp_path / "work")
    assert starts.read_text() == "1"
