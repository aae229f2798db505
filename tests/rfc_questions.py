"""Every conditional of every RFC 0077 example, asked in both float modes: the questions
that tests/test_threads.py and tests/test_answer_order.py ask in different orders, from
different threads and processes, and whose answers must not change.

A question is named by ``(file stem, function name, index of the if in walk order,
strict_ieee)``; an answer is ``(class name, str(decision))``, the status and all of its
evidence text.

>>> answers = in_order()           # {question: answer}, asked one by one in file order
>>> ask_all(questions(), order)    # the same questions in any order
"""

from __future__ import annotations

import functools
from pathlib import Path

import analyses
from polypad import budget
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.script import parse

RFC = Path(__file__).parent / "examples" / "rfc0077"

Key = tuple[str, str, int, bool]
Answer = tuple[str, str]


def functions(stem: str) -> list[n.PrimFunc]:
    """The functions of one example file, freshly parsed."""
    path = RFC / f"{stem}.py"
    node = parse(path.read_text(), filename=str(path))
    return list(node.funcs) if isinstance(node, n.IRModule) else [node]


def conditionals(func: n.PrimFunc) -> list[n.IfThenElse]:
    return [x for x in walk(func.body) if isinstance(x, n.IfThenElse)]


def stems() -> list[str]:
    return sorted(p.stem for p in RFC.glob("*.py"))


def questions(stem_list: list[str] | None = None) -> list[tuple[Key, n.PrimFunc, n.IfThenElse]]:
    """``(key, function, if)`` for every conditional, both modes, in file order (reals
    first), each file parsed once."""
    out = []
    for stem in stem_list if stem_list is not None else stems():
        for func in functions(stem):
            for k, stmt in enumerate(conditionals(func)):
                for strict in (False, True):
                    out.append(((stem, func.name, k, strict), func, stmt))
    return out


#: The budget of each question: these tests compare answers, and must not race the clock.
#: Alone each takes well under a second; the default 10 s can run out on a busy shared
#: machine, and a time limit reached makes the answer another (honest) one.
UNHURRIED = 600.0
#: Times a question is asked while a time limit shapes its answer (see :func:`ask`).
ATTEMPTS = 5


def ask(question: tuple[Key, n.PrimFunc, n.IfThenElse]) -> tuple[Key, Answer]:
    """The answer to ``question``, asked with :data:`UNHURRIED` seconds, :func:`settled`.

    Inside, Z3 also has timeouts of its own (a few seconds, a fraction of one for the
    search at known points), not the budget's; a slow machine can reach them, and the
    answer is then ``Unknown`` or another counterexample -- exact or honest, but shaped
    by the clock, not by what was asked before.  Such an answer is never remembered by
    polypad's caches, so the question is asked again (up to :data:`ATTEMPTS` times)
    until no time limit is reached; an answer still shaped by one is returned as it is.
    """
    key, func, stmt = question
    decided = settled(lambda: analyses.can_remove_conditional(
        func, stmt, strict_ieee=key[3], budget=UNHURRIED))
    return key, (type(decided).__name__, str(decided))


def settled(work):
    """``work()``, done again while a time limit was reached in it (up to :data:`ATTEMPTS`
    times in all); the last result when every attempt reached one."""
    for _ in range(ATTEMPTS):
        with budget.counting_time_limits() as limits:
            value = work()
        if not limits[0]:
            break
    return value


def unhurried(work):
    """``work`` as a call that gives every budgeted call inside :data:`UNHURRIED` seconds
    (those that pass no budget of their own) and is :func:`settled`."""
    def call():
        with budget.within(UNHURRIED):
            return work()

    return lambda: settled(call)


def ask_all(qs, order=None) -> dict[Key, Answer]:
    """The answers to ``qs``, asked one after another in ``order`` (a permutation of
    their indices; file order when omitted)."""
    order = range(len(qs)) if order is None else order
    return dict(ask(qs[k]) for k in order)


@functools.cache
def shared_questions() -> list[tuple[Key, n.PrimFunc, n.IfThenElse]]:
    """:func:`questions`, parsed once for the whole test session: asking about the same
    function objects again meets whatever they left in polypad's caches."""
    return questions()


@functools.cache
def in_order() -> dict[Key, Answer]:
    """The answers to :func:`shared_questions`, asked one by one in file order, in this
    process (computed once)."""
    return ask_all(shared_questions())


def differences(got: dict[Key, Answer], want: dict[Key, Answer]) -> list[str]:
    """One line per question whose answer differs (or is missing)."""
    out = []
    for key, answer in want.items():
        if got.get(key) != answer:
            out.append(f"{key}: {answer[1][:300]}\n  became {str(got.get(key))[:300]}")
    return out


# ---------------------------------------------------------------- fresh processes


def fresh(keys: list[Key], timeout: float = 600) -> dict[Key, Answer]:
    """Every question asked in a process of its own, where nothing was asked before.

    A process starts (this file as a script), imports what asking imports, and
    forks one child per question of ``keys`` (two at a time); the child parses
    its file, asks, and exits.  A fork of a process that asked nothing is fresh in the
    sense that matters, and costs milliseconds where a new interpreter costs
    seconds.
    """
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(Path(__file__).parent)])}
    out = subprocess.run([sys.executable, __file__], input=json.dumps(keys), capture_output=True,
                         text=True, env=env, timeout=timeout, check=True)
    return {tuple(key): tuple(answer) for key, answer in map(json.loads, out.stdout.splitlines())}


def _answer_one(key: Key) -> str:
    import json

    stem, name, k, strict = key
    func = next(f for f in functions(stem) if f.name == name)
    return json.dumps(ask((key, func, conditionals(func)[k])))


def _main() -> None:
    import importlib
    import json
    import multiprocessing
    import pkgutil
    import sys

    import codegen

    # Everything asking may import lazily, imported before the first fork, so that
    # each child pays for its question only.
    for package in (analyses, codegen):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    keys = [tuple(key) for key in json.load(sys.stdin)]
    with multiprocessing.get_context("fork").Pool(2, maxtasksperchild=1) as pool:
        for line in pool.imap(_answer_one, keys, chunksize=1):
            print(line, flush=True)


if __name__ == "__main__":
    _main()
