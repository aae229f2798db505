"""The counterexample for a race of a GPU launch: both instances, their threads and
the element, in words (:mod:`analyses.gpu_sync`).

Where an access's index reads memory (``B[X[i]] = ...``), the model holds every
element the index could name (:func:`polypad.model.extract_gathers`): the two
instances *may* touch the same element, whichever values ``X`` holds, and the
evidence says so, naming the load, with one such element as the example."""

from __future__ import annotations

import islpy as isl

from polypad.ir.show import show

from . import instances as inst
from .evidence import Counterexample, Element
from .gpu_threads import thread_text


def private_text(scope: str) -> str:
    """Why two copies of private memory (or two blocks) cannot share an element."""
    if scope == "local":
        return ("the element is in local memory, private to each thread, and two threads "
                "would need to share it")
    if scope == "shared":
        return ("the element is in shared memory, private to each block, and two blocks "
                "would need to share it")
    return "two blocks touch one element and blocks never wait for one another"



def race_evidence(why, pairs: isl.Map, coords, text: str) -> Counterexample:
    """The first pair of ``pairs`` (instances of ``why``'s statements ``s`` and ``d``,
    accesses ``a`` and ``b``) as a counterexample whose description ends with ``text``."""
    model, s, d, a, b = why
    point = inst.first_point(isl.UnionMap.from_map(pairs))
    values, params = inst.point_coordinates(point)
    k = s.domain.dim(isl.dim_type.set)
    pair = isl.Set.from_point(point).unwrap()
    src, dst = inst.instance(model, s, values[:k]), inst.instance(model, d, values[k:])
    threads = []
    for stmt, side in ((s, pair.domain()), (d, pair.range())):
        where = side.apply(coords[stmt.name]).sample_point()
        threads.append(thread_text(inst.point_coordinates(where)[0]))
    touched = pair.domain().apply(a.relation).intersect(pair.range().apply(b.relation))
    element_values = inst.point_coordinates(touched.sample_point())[0]
    element = Element(a.buffer.name, tuple(int(v) for v in element_values))
    verbs = {"write": "writes", "read": "reads"}
    loads = tuple(dict.fromkeys((*a.gathered, *b.gathered)))
    if loads:
        what = "write" if a.kind == b.kind == "write" else "touch"
        read = " and ".join(show(x) for x in loads)
        description = (f"{src} on {threads[0]} and {dst} on {threads[1]} may {what} the "
                       f"same element ({element}, for one; {src} first in the serial "
                       f"program): {read} is read from memory, so the index may take any "
                       f"value inside {a.buffer.name}, and {text}")
    else:
        description = (f"{src} on {threads[0]} {verbs[a.kind]} {element} and {dst} on "
                       f"{threads[1]} {verbs[b.kind]} it after it in the serial program, but "
                       f"{text}")
    return Counterexample(description, instances=(src, dst), element=element, params=params,
                          values={"first thread": threads[0], "second thread": threads[1]})



__all__ = ["private_text", "race_evidence"]
