"""autoschedule on a real Dask LocalCluster (two worker processes, one thread each):
candidates compile on the workers and are timed there, one at a time per machine,
and the search walks the same candidates as the local runner."""

from __future__ import annotations

import importlib

import pytest
from tuner_support import assert_matches_reference, blur

import polypad as pp

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.numba


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None,
                                       resources={"polypad_measure": 1})
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def test_a_search_on_the_cluster_matches_the_reference_and_the_local_walk(client):
    f = blur()
    on_cluster = pp.autoschedule(f, budget_s=120, max_candidates=4, client=client)
    tuning = on_cluster.tuning
    assert tuning.runner.startswith("compiled on 2 Dask workers")
    assert len(tuning.tried) == 4
    assert tuning.measured == sum(t.status == "ok" for t in tuning.tried) >= 1
    assert_matches_reference(f, on_cluster.func)
    local = pp.autoschedule(f, budget_s=120, max_candidates=4, workers=0)
    assert [t.key for t in tuning.tried] == [t.key for t in local.tuning.tried]


def test_no_timing_overlaps_another_task_on_the_machine(client):
    # The spans are the workers' own wall clocks (one machine here, one clock), taken
    # inside the tasks: Dask's own task stream shifts each worker's times by its
    # estimate of the clock offset, which may be off by more than a short timing.
    from polypad.tuner.distributed import DaskRunner
    from polypad.tuner.search import search

    runner = DaskRunner(client)
    search(blur(), budget_s=120, runner=runner, log=None, seed=1, target="numba",
           max_candidates=6)
    compiles = [s for s in runner.spans if s[0] == "compile"]
    timings = [s for s in runner.spans if s[0] == "time"]
    assert len(compiles) == 6 and len(timings) >= 1, runner.spans
    assert {s[3] for s in compiles} <= set(client.scheduler_info()["workers"])
    for what, start, stop, worker in timings:
        for other in runner.spans:
            if other[1:] != (start, stop, worker):
                assert other[2] <= start or other[1] >= stop, (what, start, stop, other)


def test_polypad_tune_runs_on_the_scheduler_it_is_given(client, tmp_path, capsys):
    from tuner_support import BLUR

    from polypad.cli import EXIT_OK, main

    kernel = tmp_path / "blur.py"
    kernel.write_text(BLUR)
    address = client.scheduler.address
    code = main(["tune", str(kernel), "--scheduler", address, "--budget", "120",
                 "--max-candidates", "2"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    assert "compiled on 2 Dask workers" in out
    assert out.startswith("# function blur\n# blur: best ")


def test_each_worker_times_the_kernel_it_compiled_from_its_memory(client):
    sch = pp.autoschedule(blur(), budget_s=120, max_candidates=3, client=client, seed=5)
    # worker address -> the kernels it holds (a lambda: pickled by value, not by a
    # module the workers cannot import)
    held = client.run(
        lambda: importlib.import_module("polypad.tuner.measure").compiled_kernel_names())
    names = {name.split(":", 1)[1] for names in held.values() for name in names}
    timed = {t.key for t in sch.tuning.tried if t.status == "ok"}
    assert timed and timed <= names
