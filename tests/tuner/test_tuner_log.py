"""The tuning log: a later call returns the best logged schedule without searching,
in another process too; a search resumes from it; bad lines are skipped with a
warning, never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from tuner_support import MATMUL, assert_matches_reference, matmul

import polypad as pp
from polypad.tuner import TuningLogWarning, best_logged
from polypad.tuner.log import TuningLog, func_hash

pytestmark = pytest.mark.numba
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "tuning.jsonl"
    sch = pp.autoschedule(matmul(), budget_s=120, max_candidates=4, workers=0, log=path)
    return path, sch


def test_every_candidate_tried_is_a_line_and_the_search_ends_with_one(logged):
    path, sch = logged
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["candidate"] * 4 + ["search"]
    first = records[0]
    assert first["func_hash"] == func_hash(matmul(), "numba")
    assert first["status"] == "ok" and first["seconds"] == sorted(first["runs"])[
        len(first["runs"]) // 2]
    assert set(first["machine"]) == {"node", "cpu", "cores"}
    assert {"polypad", "numba", "numpy"} <= set(first["versions"])


def test_a_later_call_in_another_process_reads_the_log_without_searching(logged):
    path, sch = logged
    program = f"""
import json, time
import polypad as pp
f = pp.parse({MATMUL!r})
start = time.perf_counter()
sch = pp.autoschedule(f, log={str(path)!r})
elapsed = time.perf_counter() - start
print(json.dumps(dict(elapsed=elapsed, trace=str(sch.trace), from_log=sch.tuning.from_log,
                      key=sch.tuning.best_key)))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["from_log"] is True
    assert found["key"] == sch.tuning.best_key
    assert found["trace"] == str(sch.trace)
    print(f"log read in another process in {found['elapsed']:.3f} s")


def test_a_resumed_search_takes_the_logged_candidates_and_tries_the_next(logged, tmp_path):
    path, sch = logged
    copy = tmp_path / "resume.jsonl"
    copy.write_text(path.read_text())
    more = pp.autoschedule(matmul(), budget_s=120, max_candidates=2, workers=0, log=copy,
                           resume=True)
    tried = more.tuning.tried
    assert [t.from_log for t in tried] == [True] * 4 + [False] * 2
    assert [t.key for t in tried[:4]] == [t.key for t in sch.tuning.tried]
    assert_matches_reference(matmul(), more.func)
    assert len(copy.read_text().splitlines()) == 5 + 2 + 1


def test_corrupt_and_foreign_lines_are_skipped_with_a_warning(logged, tmp_path):
    path, sch = logged
    lines = path.read_text().splitlines()
    good = json.loads(lines[0])
    foreign_machine = dict(good, machine={"node": "elsewhere", "cpu": "?", "cores": 64},
                           seconds=1e-12, key="faster-elsewhere")
    bad_trace = dict(good, key="forged", seconds=1e-12,
                     trace=[["parallel", [["loop", "k"]]]])  # k carries the reduction
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([
        "{not json", json.dumps({"format": "other-tool", "x": 1}),
        json.dumps(foreign_machine), json.dumps(dict(good, seconds=-1.0, key="negative")),
        json.dumps(bad_trace), *lines,
        # a search line naming the forged candidate, and a line cut short
        json.dumps(dict(json.loads(lines[-1]), best="forged")),
        lines[0][: len(lines[0]) // 2]]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = best_logged(matmul(), broken)
    messages = [str(w.message) for w in caught if issubclass(w.category, TuningLogWarning)]
    assert len(messages) == 2
    assert "skipped 5 line(s)" in messages[0]
    assert "line 12: not JSON" in messages[0]
    for why in ("line 1: not JSON", "line 2: not a polypad tuning record",
                "line 3: recorded on another machine", "line 4: a candidate record"):
        assert why in messages[0]
    assert "forged" in messages[1] and "does not replay" in messages[1]
    assert again.tuning.best_key == sch.tuning.best_key
    assert str(again.trace) == str(sch.trace)


def test_a_log_without_the_function_gives_nothing(tmp_path):
    empty = tmp_path / "none.jsonl"
    assert best_logged(matmul(), empty) is None
    TuningLog(empty).append("search", "another-hash", "numba", func="other")
    assert best_logged(matmul(), empty) is None
