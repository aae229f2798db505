"""autoschedule on a real Dask LocalCluster (two worker processes, one thread each):
candidates compile on the workers and are timed there, one at a time per machine,
and the search walks the same candidates as the local runner."""

from __future__ import annotations

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
    f = blur()
    with distributed.get_task_stream(client) as stream:
        pp.autoschedule(f, budget_s=120, max_candidates=6, client=client, seed=1)
    spans = []  # (start, stop, what) of every task's compute, on one machine here
    for task in stream.data:
        for part in task["startstops"]:
            if part["action"] == "compute":
                spans.append((part["start"], part["stop"], task["key"]))
    timings = [s for s in spans if "time_candidate" in str(s[2])]
    compiles = [s for s in spans if "_compile_task" in str(s[2])]
    assert len(timings) >= 1 and len(compiles) == 6, spans
    for start, stop, key in timings:
        for other_start, other_stop, other in spans:
            if other != key:
                assert other_stop <= start or other_start >= stop, (key, other, spans)
