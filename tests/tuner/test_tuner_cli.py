"""``polypad tune`` searches and logs, with a progress line; ``polypad build --log``
emits the kernel of the best logged schedule."""

from __future__ import annotations

import json

import pytest
from tuner_support import MATMUL, assert_matches_reference, matmul

import polypad as pp
from polypad.cli import EXIT_OK, EXIT_USAGE, main
from polypad.tuner.search import ranked

pytestmark = pytest.mark.numba


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    kernel = folder / "kernel.py"
    kernel.write_text("from tvm.script import tir as T\n" + MATMUL)
    log = folder / "tuning.jsonl"
    return kernel, log


def test_tune_prints_progress_and_the_best_trace(tuned, capsys):
    kernel, log = tuned
    code = main(["tune", str(kernel), "--func", "matmul", "--budget", "120", "--log", str(log),
                 "--workers", "0", "--max-candidates", "3"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    progress = [line for line in err.splitlines() if line.startswith("[")]
    space = len(ranked(matmul(), 0))
    assert [line.split("] ")[1].split(" tried")[0] for line in progress] == [
        f"{k}/{space}" for k in (1, 2, 3)]
    timed = sum(r["status"] == "ok" for r in map(json.loads, log.read_text().splitlines())
                if r["kind"] == "candidate")
    assert f"{timed} timed, best " in progress[-1]
    assert out.startswith("# function matmul\n# matmul: best ")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["candidate"] * 3 + ["search"]


def test_build_with_the_log_emits_the_best_schedule(tuned, capsys):
    kernel, log = tuned
    assert main(["build", str(kernel), "--log", str(log)]) == EXIT_OK
    out, _ = capsys.readouterr()
    best = [r for r in map(json.loads, log.read_text().splitlines()) if r["kind"] == "search"]
    assert out.startswith(f"# function matmul, schedule {best[-1]['best']} from {log}")
    sch = pp.autoschedule(matmul(), log=log)
    import codegen

    assert codegen.build(sch.func).source in out
    assert_matches_reference(matmul(), sch.func)


def test_build_with_a_log_that_lacks_the_function_says_so(tuned, tmp_path, capsys):
    kernel, _ = tuned
    empty = tmp_path / "empty.jsonl"
    assert main(["build", str(kernel), "--log", str(empty)]) == EXIT_USAGE
    _, err = capsys.readouterr()
    assert f"{empty} holds no schedule of matmul; run polypad tune" in err
