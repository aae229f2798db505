"""polypad under threads and processes: the same answers as one thread, and no crash.

Four threads ask every conditional of every RFC 0077 example in both float modes, three
rounds, while schedules are built (the bundled examples, split / reorder / compute_at),
passes run, files parse and kernels are built and called -- all in one pool, on the same
function objects, so the threads share polypad's caches.  Every answer (status and
evidence text), printed schedule, trace and kernel output must equal the single-threaded
one.  Z3 once crashed here (its global context shared by the threads).  Process pools
with the fork and the spawn start methods give the same answers too, and a forked child
runs a parallel kernel although its parent started GNU OpenMP.
"""

from __future__ import annotations

import functools
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
import rfc_questions as rq

import codegen
import polypad as pp
from codegen.numba import compiler
from polypad.examples import conv_layer, row_summation
from polypad.schedule import Schedule
from polypad.script import parse

STENCIL = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,), "float32")
    for i in T.serial(18):
        with T.block("B"):
            B[i] = A[i] * T.float32(2)
    for i in T.serial(16):
        with T.block("C"):
            C[i] = B[i] + B[i + 1] + B[i + 2]
'''


def _schedule_text(sch: Schedule) -> str:
    return pp.script(sch.func) + "\n" + str(sch.trace)


def _stencil() -> str:
    sch = Schedule(parse(STENCIL))
    io, ii = sch.split(sch.get_loops("C")[0], [None, 4])
    sch.reorder(io, ii)
    sch.compute_at("B", io)
    return _schedule_text(sch)


def _row_sum_kernel(target: str) -> bytes:
    kernel = codegen.build(row_summation.schedule().func, target=target)
    a = np.arange(6 * 40, dtype=np.float32).reshape(6, 40) % 7
    b = np.zeros(6, np.float32)
    kernel(a, b, 6, 40)
    return b.tobytes()


SMALL_CONV = {"n": 1, "ci": 8, "co": 8, "w": 10, "h": 4}


@functools.cache
def _scheduled_conv():
    """The small conv layer's schedule, made once: "schedule conv_layer" already makes it
    in the threads, and the kernel's work is the build and the call."""
    return conv_layer.schedule(conv_layer.conv_layer(**SMALL_CONV), tile_x=5, tile_c=4).func


def _conv_kernel() -> bytes:
    func = _scheduled_conv()
    rng = np.random.default_rng(0)
    args = [rng.integers(-3, 4, p.shape).astype(np.float32) for p in func.params]
    codegen.build(func)(*args)
    return args[-1].tobytes()


def _passes(stem: str) -> str:
    func = rq.functions(stem)[0]
    out = pp.transform.remove_branching_through_overcompute(pp.transform.simplify(func))
    return pp.script(out)


# Work besides the questions: name -> a call whose result must not depend on the thread.
# Each is unhurried (rq.unhurried: a generous budget, done again past a time limit): the
# passes and primitives would otherwise race the default budget, and a slow machine
# changes their result (a pass out of time returns its input) with no thread at fault.
OTHER_WORK = {name: rq.unhurried(work) for name, work in {
    "schedule row_summation": lambda: _schedule_text(row_summation.schedule()),
    "schedule conv_layer": lambda: _schedule_text(conv_layer.schedule(
        conv_layer.conv_layer(**SMALL_CONV), tile_x=5, tile_c=4)),
    "split, reorder, compute_at": _stencil,
    "numba row_summation": lambda: _row_sum_kernel("numba"),
    "python row_summation": lambda: _row_sum_kernel("python"),
    "numba conv_layer": _conv_kernel,
    "passes implicit_default_step2": lambda: _passes("implicit_default_step2"),
    "passes elementwise_transform_b": lambda: _passes("elementwise_transform_b"),
    "parse every example": lambda: "\n".join(
        pp.script(f) for stem in rq.stems() for f in rq.functions(stem)),
}.items()}


@pytest.fixture(scope="module")
def single_threaded():
    """The questions, and every answer and result, from this thread alone."""
    qs = rq.shared_questions()
    return qs, rq.in_order(), {name: work() for name, work in OTHER_WORK.items()}


def test_four_threads_give_the_single_threaded_answers(single_threaded):
    qs, answers, results = single_threaded
    jobs = [(("question", round_, k), lambda q=q: rq.ask(q)[1])
            for round_ in range(3) for k, q in enumerate(qs)]
    jobs += [(("work", round_, name), work) for round_ in range(3)
             for name, work in OTHER_WORK.items()]
    # Interleave the kinds of work, so that kernels build while questions are asked.
    rng = np.random.default_rng(0)
    jobs = [jobs[k] for k in rng.permutation(len(jobs))]
    with ThreadPoolExecutor(4) as pool:
        futures = [(what, pool.submit(job)) for what, job in jobs]
        got = [(what, future.result()) for what, future in futures]
    wrong = []
    for (kind, _, which), value in got:
        want = answers[qs[which][0]] if kind == "question" else results[which]
        if value != want:
            wrong.append(f"{kind} {qs[which][0] if kind == 'question' else which}: "
                         f"{str(want)[:300]}\n  became {str(value)[:300]}")
    assert wrong == []


def test_one_module_written_and_imported_by_many_threads_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv(compiler.CACHE_ENV, str(tmp_path))
    # A module of its own: the kernel cache of this process must not keep one from tmp_path.
    source = codegen.build(row_summation.schedule().func).source + "\n# test_threads\n"
    path = tmp_path / f"{compiler.module_name(source)}.py"
    seen, start = [], threading.Barrier(8)

    def write_and_read():
        start.wait()
        compiler._write(path, source)
        seen.append(path.read_text())

    threads = [threading.Thread(target=write_and_read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [source] * 8
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left

    def load():
        start.wait()
        return compiler.load(source)

    with ThreadPoolExecutor(8) as pool:
        dispatchers = list(pool.map(lambda _: load(), range(8)))
    assert all(d is dispatchers[0] for d in dispatchers)


# ---------------------------------------------------------------- processes

# A few questions of each kind (removable, refuted, unknown; both modes) and a kernel.
PROCESS_STEMS = ["implicit_default_step2", "elementwise_transform_b", "conv1d_transformed"]


def _in_a_child(stem: str) -> tuple:
    answers = rq.ask_all(rq.questions([stem]))
    return answers, _row_sum_kernel("numba"), codegen.numba.runtime._serial_only


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_process_pools_give_the_same_answers(method):
    want = {k: v for k, v in rq.in_order().items() if k[0] in PROCESS_STEMS}
    kernel = _row_sum_kernel("numba")  # the parent has run a parallel loop (GNU OpenMP)
    with ThreadPoolExecutor(2) as pool:  # and has threads asking questions right up to the fork
        list(pool.map(rq.ask, rq.questions(PROCESS_STEMS[:1])))
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        results = list(pool.map(_in_a_child, PROCESS_STEMS))
    got = {}
    for answers, child_kernel, serial in results:
        got.update(answers)
        assert child_kernel == kernel
        # A forked child of a process that started GNU OpenMP runs the serial build.
        assert serial == (method == "fork" and codegen.numba.runtime._layer() == "omp"
                          and _gnu_openmp())
    assert rq.differences(got, want) == []


def _gnu_openmp() -> bool:
    from numba.np.ufunc import omppool

    return omppool.openmp_vendor == "GNU"
