"""The value an element holds at one concrete point, traced back through its last writers.

A counterexample Z3 finds is a real execution only if the values it gives
the elements could be there (:mod:`.refutation`).  An element last written
by an update the facts do not describe (``C[i, j] = C[i, j] + A[i, k] *
B[k, j]``) could hold anything, for all the prover knows -- yet at one
concrete point its value is fixed by the inputs: ``C[0, 0]`` just before
``(i, j, k) = (0, 0, 1)`` holds ``0.0 + A[0, 0] * B[0, 0]``, because the
init store ran at ``(0, 0, 0)`` and then the update.

:class:`ValueTrace` writes that value out, instance by instance.  The last
write of the element before the point is found with ISL (the writers'
instances that write it and run before, lexicographically largest); its
stored expression is taken at that instance (loop counters and parameters
replaced by their values, lets by theirs), and each element *it* reads is
traced the same way, back to the function's inputs.  Each value written on
the way becomes a fresh variable and an equation ``v == stored
expression``, so a value read many times is stated once.

The trace is exact or nothing: it gives up (:class:`Untraceable`) where a
writer may or may not run (a condition on data), an index is not
quasi-affine or depends on data, the element last held a fresh allocation's
arbitrary contents, or the trace grows past :data:`MAX_WRITES` writes.
Inputs are the elements of the function's buffer parameters never written
before the point where they are read: the same Z3 symbol as the question's
own load where the element is not written before the question's point
either, else an initial-value buffer of its own.
"""

from __future__ import annotations

import islpy as isl

from polypad import budget
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter, walk
from polypad.model.isl_helpers import fix
from polypad.model.ranges import wrap

from .program import Program, Site

#: The most writes one trace follows (a running sum of 10**6 terms is not written out).
MAX_WRITES = 400


class Untraceable(Exception):
    """The value cannot be traced exactly; the message says why."""


class ValueTrace:
    """Traces element values at concrete points of ``program``.

    ``params`` gives the values of the function's scalar parameters (by
    variable); ``question`` is the site and loop counter values of the point
    the question is asked at.  :attr:`equations` collects ``v == value``
    for every write traced, and :attr:`inputs` the input elements reached.
    """

    def __init__(self, program: Program, params: dict[n.Var, int], question: Site,
                 at: tuple[int, ...]) -> None:
        self.program = program
        self.params = params
        self.question = (question, tuple(at))
        self.equations: list[n.Expr] = []
        self.inputs: dict[tuple, n.BufferLoad] = {}
        self._written: dict[tuple, n.Var] = {}  # (site index, instance) -> its value
        self._initial: dict[int, n.Buffer] = {}
        self._param_names = {program.names.name(v): val for v, val in params.items()
                             if v in program.names}
        owned = {id(p) for p in program.func.params if isinstance(p, n.Buffer)}
        self._is_param = lambda b: id(b) in owned

    @property
    def writes(self) -> list[tuple[Site, tuple[int, ...]]]:
        """Every write the values traced so far depend on: (site, loop counters)."""
        sites = {s.index: s for s in self.program.sites}
        return [(sites[index], y) for index, y in self._written]

    def value_before(self, buffer: n.Buffer, element: tuple[int, ...]) -> n.Expr:
        """The value of ``buffer[element]`` just before the question's point: a variable
        the equations define, or an input load.  Raises :class:`Untraceable`."""
        return self._before(buffer, tuple(element), *self.question)

    # ------------------------------------------------------------ the trace

    def _before(self, buffer: n.Buffer, element: tuple[int, ...], site: Site,
                at: tuple[int, ...]) -> n.Expr:
        # Iterative, so a long chain of writes needs no deep Python stack: each entry
        # waits until the writes its value reads are traced.
        want = (buffer, element, site, at)
        done: dict[tuple, n.Expr] = {}
        stack = [want]
        while stack:
            key = stack[-1]
            if key in done:
                stack.pop()
                continue
            budget.check()
            last = self._last_write(*key)
            if last is None:
                done[key] = self._input(key[0], key[1])
                stack.pop()
                continue
            w_site, y = last
            if (w_site.index, y) in self._written:
                done[key] = self._written[(w_site.index, y)]
                stack.pop()
                continue
            value, reads = self._stored(w_site, y)
            pending = [r for r in reads.values() if r not in done]
            if pending:
                stack.extend(pending)
                continue
            var = n.Var(f"{key[0].name}@{w_site.name}{list(y)}", key[0].dtype)
            resolved = _Loads({ld: done[r] for ld, r in reads.items()}).visit(value)
            self.equations.append(n.Eq(var, resolved))
            self._written[(w_site.index, y)] = var
            if len(self._written) > MAX_WRITES:
                raise Untraceable(f"the value depends on more than {MAX_WRITES} writes")
            done[key] = var
            stack.pop()
        return done[want]

    def _input(self, buffer: n.Buffer, element: tuple[int, ...]) -> n.BufferLoad:
        """An element never written before the point it is read at: the input."""
        if not self._is_param(buffer):
            raise Untraceable(f"{buffer.name} is read before anything is written to it")
        key = (id(buffer), element)
        if key not in self.inputs:
            holder = buffer
            if self._last_write(buffer, element, *self.question) is not None:
                # Written by the question's point: the question's symbol for the element
                # means what is there then, so the input gets a buffer of its own.
                holder = self._initial.setdefault(
                    id(buffer), n.Buffer(buffer.name, buffer.shape, buffer.dtype))
            self.inputs[key] = n.BufferLoad(holder, tuple(n.IntImm(k) for k in element))
        return self.inputs[key]

    def _last_write(self, buffer: n.Buffer, element: tuple[int, ...], site: Site,
                    at: tuple[int, ...]) -> tuple[Site, tuple[int, ...]] | None:
        """The last instance that writes ``buffer[element]`` strictly before ``site`` at
        ``at``, as (writer site, its loop counters); None if nothing does."""
        prog = self.program
        point = self._fix(isl.Set.universe(prog.space(site).space), at)
        cell = self._fix(isl.Set.universe(prog.buffer_space(buffer)), element)
        best = None
        for w_site, _, w_rel in prog.writers(buffer):
            instances = w_rel.intersect_range(cell).domain()
            instances = instances.intersect(
                prog.before(w_site, site).intersect_range(point).domain())
            instances = self._fix(instances, ())
            if instances.is_empty():
                continue
            y = _coordinates(instances.lexmax().sample_point())
            time = _time(w_site, y)
            if best is None or time > best[0]:
                best = (time, w_site, y)
        if best is None:
            return None
        # The writers' instances are over-approximated where ISL cannot be exact, so
        # the last of them is the last write only if it certainly writes the element.
        _, w_site, y = best
        if not isinstance(w_site.stmt, n.BufferStore):
            raise Untraceable(f"{buffer.name} holds a fresh allocation's contents")
        if prog.domain(w_site)[1]:
            raise Untraceable(f"whether `{_first(w_site.stmt)}` runs depends on data")
        if not prog.access(w_site, w_site.stmt.buffer, w_site.stmt.indices)[1]:
            raise Untraceable(f"`{_first(w_site.stmt)}` writes an element ISL cannot "
                              "name exactly")
        return w_site, y

    def _stored(self, site: Site, y: tuple[int, ...]) -> tuple[n.Expr, dict]:
        """The value ``site`` stores at instance ``y``, with every load at a constant
        element, and for each load the point whose value it reads."""
        env: dict = dict(zip(site.loop_vars, (n.IntImm(v, x.dtype) for x, v in
                                              zip(site.loop_vars, y))))
        env.update({v: n.IntImm(val, v.dtype) for v, val in self.params.items()})
        for let in site.lets:  # outer first; a let's value is read at the store's time
            env[let.var] = substitute(let.value, env)
        value = substitute(site.stmt.value, env)
        reads: dict[n.BufferLoad, tuple] = {}
        for load in [x for x in walk(value) if isinstance(x, n.BufferLoad)]:
            element = tuple(_constant(i) for i in load.indices)
            reads[load] = (load.buffer, element, site, y)
        return value, reads

    def _fix(self, s: isl.Set, coords) -> isl.Set:
        return fix(s, coords, self._param_names)


def all_parameters(s: isl.Set, params: dict[str, int]) -> dict[str, int] | None:
    """Values for every parameter of ``s``: those of ``params``, and for the others
    the values of a point of ``s`` with those fixed (None when it has none)."""
    s = fix(s, (), params)
    if s.is_empty():
        return None
    point = s.lexmin().sample_point()
    space = point.get_space()
    return {space.get_dim_name(isl.dim_type.param, k):
            int(point.get_coordinate_val(isl.dim_type.param, k).to_python())
            for k in range(space.dim(isl.dim_type.param))}


def earliest(s: isl.Set, params: dict[str, int]) -> tuple[int, ...] | None:
    """The lexicographically first point of ``s`` with the named parameters at their
    values (None when there is none)."""
    s = fix(s, (), params)
    if s.is_empty():
        return None
    return _coordinates(s.lexmin().sample_point())


class _Loads(Rewriter):
    """Replaces each load (at a constant element) by the traced value it reads."""

    def __init__(self, values: dict[n.BufferLoad, n.Expr]) -> None:
        self.values = values

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.Expr:
        return self.values.get(node, node)


def _constant(index: n.Expr) -> int:
    """The value of an index whose variables are all replaced by constants."""
    value = constant_value(index)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Untraceable(f"the index {index} has no constant value here")
    return value


_ARITH = {n.Add: lambda a, b: a + b, n.Sub: lambda a, b: a - b, n.Mul: lambda a, b: a * b,
          n.FloorDiv: lambda a, b: a // b if b else 0, n.FloorMod: lambda a, b: a % b if b else 0,
          n.Min: min, n.Max: max}
_COMPARE = {n.Eq: lambda a, b: a == b, n.Ne: lambda a, b: a != b, n.Lt: lambda a, b: a < b,
            n.Le: lambda a, b: a <= b, n.Gt: lambda a, b: a > b, n.Ge: lambda a, b: a >= b}


def constant_value(e: n.Expr) -> int | bool | None:
    """The value of an integer or boolean expression of constants, as executed (a
    fixed-width result wraps; a zero divisor gives 0), or None when it has none (a
    variable, a load, a float)."""
    match e:
        case n.IntImm(value=v) | n.BoolImm(value=v):
            return v
        case n.Cast(value=v) if dtypes.is_int(e.dtype):
            inner = constant_value(v)
            return None if inner is None else wrap(int(inner), e.dtype)
        case n.Not(a=a):
            inner = constant_value(a)
            return None if inner is None else not inner
        case n.And(a=a, b=b) | n.Or(a=a, b=b):
            x, y = constant_value(a), constant_value(b)
            if x is None or y is None:
                return None
            return (x and y) if isinstance(e, n.And) else (x or y)
        case n.Select(condition=c, true_value=t, false_value=f):
            cond = constant_value(c)
            return None if cond is None else constant_value(t if cond else f)
    op = _ARITH.get(type(e)) or _COMPARE.get(type(e))
    if op is None or not (dtypes.is_int(e.a.dtype) or dtypes.is_bool(e.a.dtype)):
        return None
    x, y = constant_value(e.a), constant_value(e.b)
    if x is None or y is None:
        return None
    out = op(x, y)
    return wrap(out, e.dtype) if type(e) in _ARITH else out


def _coordinates(point: isl.Point) -> tuple[int, ...]:
    count = point.get_space().dim(isl.dim_type.set)
    return tuple(int(point.get_coordinate_val(isl.dim_type.set, k).to_python())
                 for k in range(count))


def _time(site: Site, y: tuple[int, ...]) -> list[int]:
    """Program order of instance ``y`` of ``site``: its slots and counters interleaved."""
    out = [site.slots[0]]
    for value, slot in zip(y, site.slots[1:]):
        out += [value, slot]
    return out


def _first(stmt: n.Stmt) -> str:
    from polypad.ir.show import show

    lines = show(stmt).strip().splitlines()
    return lines[0] if lines else type(stmt).__name__


def depends_on_none_of(program: Program, statements: list[n.Stmt], buffer: n.Buffer,
                       element: tuple[int, ...], site: Site, at: tuple[int, ...],
                       params: dict[str, int]) -> bool:
    """Whether the value of ``buffer[element]`` just before ``site`` at ``at`` depends
    on no instance of ``statements``: no write its trace follows is one of theirs.

    Then it is the same value in the function without those statements: removing
    writes that are never the last write of an element the value depends on leaves
    every one of those last writes, and so the value, as it is.  ``False`` where the
    value cannot be traced.
    """
    by_name = {program.names.name(v): v for v in program.parameters()}
    # Every parameter gets a value (which writes ran depends on them all).
    every = all_parameters(fix(program.domain(site)[0], at, params), params)
    if every is None:
        return False
    values = {by_name[k]: v for k, v in every.items() if k in by_name}
    trace = ValueTrace(program, values, site, at)
    try:
        trace.value_before(buffer, element)
    except Untraceable:
        return False
    ours = {id(s) for s in statements}
    return not any(id(w.stmt) in ours for w, _ in trace.writes)
