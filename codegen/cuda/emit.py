"""A lowered function with GPU-bound loops as the text of a ``numba.cuda`` module.

Each launch of :func:`analyses.gpu_threads.structure` becomes a kernel
``kernel_<k>`` and a host function ``launch_<k>`` that computes its launch
configuration from the scalar parameters (the largest extent bound to each
axis)::

    @cuda.jit(fastmath=False)
    def kernel_0(A, B):
        S = cuda.shared.array((4,), np.float32)
        bx = cuda.blockIdx.x
        tx = cuda.threadIdx.x
        S[tx] = A[bx * 4 + tx]
        cuda.syncthreads()
        tx_1 = cuda.threadIdx.x
        B[bx * 4 + tx_1] = S[3 - tx_1]


    def launch_0():
        return (2, 1, 1), (4, 1, 1)

A bound loop is its thread's index (plus the loop's start), under
``if cuda.threadIdx.x < n`` where the loop is shorter than the launch; a
store outside every loop bound to a launched axis runs on index 0 of that
axis only.  ``cuda.syncthreads()`` goes exactly where
:func:`analyses.gpu_sync.plan_barriers` placed one.  ``"shared"`` and
``"local"`` buffers are declared at the kernel's top (their shapes must be
constants); local ones are zero-filled where the function allocates them,
as the reference executor does, shared ones are not (docs/cuda.md).
Buffers the function allocates outside every launch are device arrays the
host allocates, zero-filled, for each call.  A top-level plain ``assert`` is
the entry ``(None, k)`` of ``KERNELS``, ``k`` its number in
:func:`polypad.semantics.asserts.run_asserts`: the host checks it between the
launches before and after it (:mod:`.runtime`).
"""

from __future__ import annotations

from analyses.combiners import update_of
from analyses.gpu_atomics import ATOMICS, atomic_stores
from analyses.gpu_shared_reads import unwritten_shared_reads
from analyses.gpu_sync import BarrierPlan
from analyses.gpu_threads import AXES, Launch
from polypad.errors import BuildError
from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, ForKind, PrimFunc
from polypad.ir.operators import add, as_expr
from polypad.ir.visitor import walk
from polypad.semantics.lowering import is_check

from ..bounds_guards import BoundsGuards, location
from ..source_text import AND
from .batch import MAX_BATCH, VECTOR_LANES, batch, moved_loads
from .compact import INDEX_VARS
from .emit_wide import WIDE_IMPORT, WIDE_VERSION, WideAccesses
from .expr import ExprPrinter, Names, constant, numpy_type
from .guards import FLAG, CudaGuards, store_lines
from .module_text import (
    ALIGNMENT_NAME,
    BITS_IMPORT,
    BITS_VERSION,
    aligned_arguments,
    alignment,
    alignment_constants,
    axis_index_names,
    host_buffers,
    launch_function,
    module_header,
)
from .registers import promotable
from .shifts import helper_source as shift_source
from .wide_runs import wide_runs
from .widening import widening_lets, widening_stores

#: Longest constant loop that ``T.unroll`` writes out (the compiler keeps a local
#: array in registers only where every index is a constant).
MAX_UNROLL = 64

#: The numba.cuda spelling of each axis.
SPELLING = {ForKind.BLOCK_IDX_X: "cuda.blockIdx.x", ForKind.BLOCK_IDX_Y: "cuda.blockIdx.y",
            ForKind.BLOCK_IDX_Z: "cuda.blockIdx.z", ForKind.THREAD_IDX_X: "cuda.threadIdx.x",
            ForKind.THREAD_IDX_Y: "cuda.threadIdx.y", ForKind.THREAD_IDX_Z: "cuda.threadIdx.z"}
class _Kernel(WideAccesses):
    """The text of one kernel."""

    def __init__(self, plan: BarrierPlan, launch: Launch, names: Names,
                 params: list[str], boxes: dict, widening: set[ir.Var]):
        self.plan, self.launch, self.names = plan, launch, names
        self.expr = ExprPrinter(names)
        self.boxes = boxes
        self.expr.offsets = {b: offsets for b, (_, offsets) in boxes.items()}
        self.expr.scalarizable = self.scalarizable
        # Buffers stored a value Numba may type other than as the buffer's dtype
        # (math.floor is an int64 there), also through a let: an array converts it to
        # the buffer's dtype, a variable would widen to float64.
        self.integral = widening_stores(launch.root, widening)
        self.lines: list[str] = []
        self.declared: set[Buffer] = set()
        # Axes the launch spreads over more than one index: a store outside their
        # loops runs on index 0 only.
        self.spread = [axis for axis in AXES if axis in launch.loops
                       and launch.constant_extent(axis) != 1]
        self.params = params
        self.atomics = atomic_stores(launch.root)
        self.unwritten: set[Buffer] = set()  # local buffers a read may find unwritten
        self.whole: set[Buffer] = set()  # local buffers with a checked access (.guards)
        #: The variable holding each axis's index, read once at the kernel's top: Numba's
        #: reads of the special registers are not hoisted out of loops by the compiler,
        #: and every address computed from them would be computed again at each iteration.
        self.index: dict = {}
        #: The buffers the host passes (parameters, then host buffers): a wide access of
        #: one is aligned by the call's check (:mod:`.runtime`).
        self.arguments: list[Buffer] = []
        #: The bytes each argument that a wide access (:mod:`.wide`) reads or writes must
        #: start on.
        self.wide: dict[Buffer, int] = {}
        self.uses_wide = False  # whether the kernel calls .wide at all

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def text(self, index: int, fastmath: bool, lets: list[ir.LetStmt]) -> str:
        head = [f"@cuda.jit(fastmath={fastmath})",
                f"def kernel_{index}({', '.join(self.params)}):"]
        if any(isinstance(x, (ir.BufferLoad, ir.BufferStore)) and x.buffer in self.boxes
               and id(x) not in self.expr.direct for x in walk(self.launch.root)):
            for var, axis in zip(INDEX_VARS, AXES):  # what the boxes' offsets read
                self.line(1, f"{self.names(var)} = {SPELLING[axis]}")
        for axis in AXES:
            if axis in self.launch.loops:
                self.line(1, f"{self.index[axis]} = {SPELLING[axis]}")
        body_start = len(self.lines)
        for let in lets:
            self.line(1, f"{self.names(let.var)} = {self.expr(let.value)}")
        self.stmt(self.launch.root, 1, frozenset())
        if len(self.lines) == body_start:
            self.line(1, "pass")
        self.lines, variables = self.expr.elements.resolve(self.lines, self.shape, self.names)
        self.declared -= variables  # each element a variable of its own (.scalars)
        return "\n".join(head + self.declarations() + self.lines)

    def scalarizable(self, buffer: Buffer) -> bool:
        """Whether ``buffer`` may become a variable per element (:mod:`.scalars`), if
        every access of it has constant indices."""
        return (buffer.scope == "local" and buffer.dtype.startswith("float")
                and buffer not in self.unwritten and buffer not in self.integral
                and buffer not in self.whole)

    def declarations(self) -> list[str]:
        out = []
        for buffer in sorted(self.declared, key=self.names):
            shape = []
            for extent in self.shape(buffer):
                if not isinstance(extent, int):
                    raise BuildError(f"{buffer.scope} buffer {buffer.name!r} needs a constant "
                                     f"shape on a GPU, not {buffer.shape}")
                shape.append(str(extent))
            kind = "shared" if buffer.scope == "shared" else "local"
            dims = ", ".join(shape) + ("," if len(shape) == 1 else "")
            align = alignment(buffer) if kind == "shared" else None
            aligned = f", alignment={ALIGNMENT_NAME.format(align)}" if align else ""
            out.append(f"    {self.names(buffer)} = cuda.{kind}.array(({dims}), "
                       f"{numpy_type(buffer.dtype)}{aligned})")
        return out

    def shape(self, buffer: Buffer) -> tuple:
        """``buffer``'s shape in this kernel: a local buffer's box (:mod:`.compact`)."""
        box = self.boxes.get(buffer)
        return box[0] if box is not None else buffer.shape

    def barrier(self, depth: int) -> None:
        self.line(depth, "cuda.syncthreads()")

    def block(self, stmt: ir.Stmt, depth: int, axes: frozenset) -> None:
        before = len(self.lines)
        self.stmt(stmt, depth, axes)
        if len(self.lines) == before:
            self.line(depth, "pass")

    def stmt(self, stmt: ir.Stmt, depth: int, axes: frozenset) -> None:
        checks = self.expr.guard.guards if self.expr.guard is not None else None
        if checks is None or isinstance(stmt, ir.SeqStmt):
            return self._stmt(stmt, depth, axes)
        located, checks.at = checks.at, location(stmt)  # where its checks report
        try:
            self._stmt(stmt, depth, axes)
        finally:
            checks.at = located

    def _stmt(self, stmt: ir.Stmt, depth: int, axes: frozenset) -> None:
        match stmt:
            case ir.SeqStmt():
                slots = self.plan.at(stmt)
                for k, s in enumerate(stmt.stmts):
                    if k in slots:
                        self.barrier(depth)
                    self.stmt(s, depth, axes)
                if len(stmt.stmts) in slots:
                    self.barrier(depth)
            case ir.For() if stmt.kind in SPELLING:
                self.bound_loop(stmt, depth, axes)
            case ir.For():
                self.loop(stmt, depth, axes)
            case ir.IfThenElse():
                self.line(depth, f"if {self.expr(stmt.condition)}:")
                self.block(stmt.then_case, depth + 1, axes)
                if stmt.else_case is not None:
                    self.line(depth, "else:")
                    self.block(stmt.else_case, depth + 1, axes)
            case ir.BufferStore():
                missing = [axis for axis in self.spread if axis not in axes]
                if missing:
                    guard = " and ".join(f"{self.index[a]} == 0" for a in missing)
                    self.line(depth, f"if {guard}:")
                    depth += 1
                register = self.expr.registers.get((stmt.buffer, tuple(stmt.indices)))
                if register is not None:
                    value = self.expr(stmt.value)
                    if not stmt.buffer.dtype.startswith("float"):  # Numba would widen it
                        value = f"{numpy_type(stmt.buffer.dtype)}({value})"
                    self.line(depth, f"{register} = {value}")
                elif self.expr.checked(stmt.buffer, stmt.indices, stmt):
                    for text in self.checked_store(stmt):
                        self.line(depth, text)
                elif id(stmt) in self.atomics and stmt.buffer.scope != "local":
                    self.line(depth, self.atomic(stmt, self.atomics[id(stmt)]))
                else:
                    self.line(depth, f"{self.expr.load(stmt.buffer, stmt.indices, stmt)} = "
                                     f"{self.expr(stmt.value)}")
            case ir.LetStmt():
                self.line(depth, f"{self.names(stmt.var)} = {self.expr(stmt.value)}")
                self.stmt(stmt.body, depth, axes)
            case ir.Evaluate():
                # An assumption left by the target's lowering is a fact over the
                # parameters for the analyses (CudaTarget.lowered): it runs as nothing.
                pass
            case ir.Block():
                self.line(depth, "# block " + " ".join(stmt.name.split()))
                self.stmt(stmt.body, depth, axes)
            case ir.Allocate():
                self.allocate(stmt.buffer, depth)
                self.stmt(stmt.body, depth, axes)
            case ir.DeclBuffer():
                # After lowering (polypad.semantics.lower_views), a flat view of a whole
                # buffer (TVM's FlattenBuffer): the same memory, reshaped in the kernel.
                size = self.expr(as_expr(stmt.buffer.shape[0]))
                self.line(depth, f"{self.names(stmt.buffer)} = "
                                 f"{self.names(stmt.buffer.data)}.reshape(({size},))")
                self.stmt(stmt.body, depth, axes)
            case _:
                raise BuildError(f"the cuda target cannot emit {type(stmt).__name__}")

    def checked_store(self, store: ir.BufferStore) -> list[str]:
        """The lines of ``store`` checked at run time (:mod:`.guards`)."""
        indices = [self.expr.fold(i) for i in store.indices]
        name = self.names(store.buffer)
        # The value first, then the index and its check (TVM's order, the reference
        # executor's): a load of the value outside is the failure reported.
        atomic = id(store) in self.atomics and store.buffer.scope != "local"
        value = update_of(store).operand if atomic else store.value
        held = self.names.fresh("_v")
        first = f"{held} = {self.expr(value)}"

        def statement(local: list[str]) -> str:
            if atomic:
                return self.atomic(store, self.atomics[id(store)], local, held)
            return f"{name}[{', '.join(local)}] = {held}"

        return [first, *store_lines(self.expr.guard, self.expr, store.buffer, indices,
                                    self.names, statement, store.view_access)]

    def atomic(self, store: ir.BufferStore, combiner: str,
               texts: list[str] | None = None, operand: str | None = None) -> str:
        """``cuda.atomic.add(X, (i, j), v)`` for an atomic update (:mod:`analyses.gpu_atomics`);
        ``texts`` and ``operand``, when given, are the index's and the operand's texts."""
        op = ATOMICS[combiner][0]
        update = update_of(store)
        texts = [self.expr(i) for i in store.indices] if texts is None else texts
        index = texts[0] if len(texts) == 1 else f"({', '.join(texts)})"
        operand = self.expr(update.operand) if operand is None else operand
        return f"cuda.atomic.{op}({self.names(store.buffer)}, {index}, {operand})"

    def bound_loop(self, loop: ir.For, depth: int, axes: frozenset) -> None:
        index = self.index[loop.kind]
        start = "" if isinstance(loop.min, ir.IntImm) and loop.min.value == 0 else \
            f"{self.expr(loop.min)} + "
        self.expr.bound(loop.var, loop.min, add(loop.min, loop.extent) - 1)
        self.line(depth, f"{self.names(loop.var)} = {start}{index}")
        if not self.launch.full(loop):
            self.line(depth, f"if {index} < {self.expr(loop.extent)}:")
            depth += 1
        self.block(loop.body, depth, axes | {loop.kind})

    def loop(self, loop: ir.For, depth: int, axes: frozenset) -> None:
        self.expr.bound(loop.var, loop.min, add(loop.min, loop.extent) - 1)
        var = self.names(loop.var)
        slots = self.plan.at(loop)  # a loop whose body is no sequence: 0 before, 1 after
        if isinstance(loop.min, ir.IntImm) and isinstance(loop.extent, ir.IntImm) and (
                loop.extent.value == 1
                or (loop.kind is ForKind.UNROLL and loop.extent.value <= MAX_UNROLL)):
            if self.batched(loop, depth, axes):
                return
            # Written out with the counter's value in every index (folded: a local array
            # whose every index is a constant stays in registers).
            for value in range(loop.min.value, loop.min.value + loop.extent.value):
                self.expr.constants[loop.var] = value
                if 0 in slots:
                    self.barrier(depth)
                self.stmt(loop.body, depth, axes)
                if 1 in slots:
                    self.barrier(depth)
            del self.expr.constants[loop.var]
            return
        if (loop.kind is ForKind.VECTORIZED and isinstance(loop.min, ir.IntImm)
                and loop.min.value == 0 and isinstance(loop.extent, ir.IntImm)
                and loop.extent.value in VECTOR_LANES and self.batched(loop, depth, axes)):
            return  # its lanes in wide accesses (.wide_runs); otherwise a loop, as before
        kept = []  # elements in registers for the loop's length (.registers)
        if not [axis for axis in self.spread if axis not in axes]:  # every thread runs it
            for buffer, indices in promotable(loop, self.plan, self.atomics, set(self.boxes)):
                if self.expr.checked(buffer, indices):
                    continue  # its write-back would need a check of its own: left in memory
                name = self.names.fresh(f"{self.names(buffer)}_reg")
                memory = self.expr.load(buffer, indices)
                self.line(depth, f"{name} = {memory}")
                kept.append(((buffer, indices), name, memory))
        for key, name, _ in kept:
            self.expr.registers[key] = name
        if isinstance(loop.min, ir.IntImm) and loop.min.value == 0:
            self.line(depth, f"for {var} in range({self.expr(loop.extent)}):")
        else:
            end = self.expr(add(loop.min, loop.extent))
            self.line(depth, f"for {var} in range({self.expr(loop.min)}, {end}):")
        if 0 in slots:
            self.barrier(depth + 1)
        self.block(loop.body, depth + 1, axes)
        if 1 in slots:
            self.barrier(depth + 1)
        for key, name, memory in kept:
            del self.expr.registers[key]
            self.line(depth, f"{memory} = {name}")

    def batched(self, loop: ir.For, depth: int, axes: frozenset) -> bool:
        """Write the unrolled ``loop`` with its loads of memory first, each once
        (:mod:`.batch`), where that is the same; whether it did."""
        found = batch(loop, self.plan, self.atomics, self.launch.full)
        if found is None:
            return False
        runs = wide_runs(found, self.aligned, self.expr.checked) if found.lanes else []
        if found.lanes and not runs:
            return False  # vectorized loops with no wide access: written as before
        inside = axes | {t.kind for t in found.threads}
        if [axis for axis in self.spread if axis not in inside]:
            return False  # a store on one thread only: left as it is
        for thread in found.threads:
            self.expr.bound(thread.var, thread.min, add(thread.min, thread.extent) - 1)
            start = "" if isinstance(thread.min, ir.IntImm) and thread.min.value == 0 else \
                f"{self.expr(thread.min)} + "
            self.line(depth, f"{self.names(thread.var)} = {start}{self.index[thread.kind]}")
        saved = dict(self.expr.constants)
        written = {id(store.buffer) for _, store in found.copies}
        registers: dict[tuple, str] = {}  # (guard, load text) moved first: its register
        per_copy = []
        wide_at = {run.first + lane: run for run in runs for lane in range(run.lanes)}
        mark, scalar = len(self.lines), {}  # where the loads' lines start; each's load
        for position, ((constants, store), guards) in enumerate(zip(found.copies,
                                                                   found.guards)):
            if position in wide_at and wide_at[position].first == position:
                self.wide_loads(found, wide_at[position], registers, saved, depth)
            self.expr.constants = {**saved, **constants}
            guard = " and ".join(self.expr.operand(g, AND) for g in guards)
            mine: dict[str, str] = {}
            for x in moved_loads(store, written):
                if len(registers) >= MAX_BATCH:
                    continue
                text = self.expr.load(x.buffer, x.indices, x)
                if (guard, text) not in registers:
                    name = self.names.fresh(f"{self.names(x.buffer)}_v")
                    registers[(guard, text)] = name
                    zero = constant(0, x.buffer.dtype)[0]
                    self.line(depth, f"{name} = {text} if {guard} else {zero}" if guard
                              else f"{name} = {text}")
                    if not self.expr.checked(x.buffer, x.indices, x):  # may go wide
                        scalar[len(self.lines) - 1 - mark] = (
                            x.buffer, [self.expr.fold(i) for i in x.indices], guard, name)
                mine[text] = registers[(guard, text)]
            per_copy.append((guard, mine))
        self.lines[mark:] = self.merged_runs(self.lines[mark:], scalar, depth)
        for position, ((constants, store), (guard, mine)) in enumerate(zip(found.copies,
                                                                            per_copy)):
            run = wide_at.get(position)
            if run is not None and run.store and self.expr.registers.get(
                    (store.buffer, tuple(store.indices))) is None:
                if run.first == position:
                    self.wide_store(found, run, per_copy, saved, depth)
                continue
            self.expr.constants = {**saved, **constants}
            self.expr.moved = mine
            if guard:
                self.line(depth, f"if {guard}:")
                self.stmt(store, depth + 1, inside)
            else:
                self.stmt(store, depth, inside)
        self.expr.moved = {}
        self.expr.constants = saved
        return True

    def allocate(self, buffer: Buffer, depth: int) -> None:
        if buffer.scope not in ("shared", "local"):
            raise BuildError(f"buffer {buffer.name!r} is allocated in {buffer.scope} memory "
                             "inside a kernel; give it scope 'shared' or 'local', or allocate "
                             "it outside the thread-bound loops")
        self.declared.add(buffer)
        if buffer.scope == "local" and buffer in self.unwritten:
            # Zero-filled, as the reference executor does, where a read may come first.
            shape = self.shape(buffer)
            counters = [self.names.fresh("_z") for _ in shape]
            for k, (counter, extent) in enumerate(zip(counters, shape)):
                self.line(depth + k, f"for {counter} in range({extent}):")
            zero = "np.float32(0)" if buffer.dtype == "float32" else \
                f"{numpy_type(buffer.dtype)}(0)"
            self.line(depth + len(counters),
                      f"{self.names(buffer)}[{', '.join(counters)}] = {zero}")


def emit(func: PrimFunc, plan: BarrierPlan, *, fastmath: bool = False,
         guards: BoundsGuards | None = None, asserts: tuple | list = ()) -> str:
    """The module text for lowered ``func`` with the barriers of ``plan``: kernels
    ``kernel_<k>``, launch configurations ``launch_<k>`` and ``KERNELS``.  With
    ``guards``, the accesses they name are checked at run time and every kernel
    takes the flag array last (:mod:`.guards`).  ``asserts`` are the conditions of
    the top-level asserts, each a ``T.assume`` root of ``func`` now (the entry
    ``(None, k)`` of ``KERNELS``, ``k`` its place in ``asserts``)."""
    from .compact import local_layout

    names = Names()
    params = [names(p) for p in func.params] + [names(b) for b in host_buffers(plan)]
    checks = None
    if guards is not None:
        checks = CudaGuards(guards, names.fresh(FLAG))
        params.append(checks.flag)
    whole = checks.checked_locals(func) if checks is not None else set()
    boxes, direct = local_layout(func, whole)
    unwritten = set(unwritten_shared_reads(func, "local"))
    scalars = [names(p) for p in func.params if isinstance(p, ir.Var)]
    constants = alignment_constants(func)
    parts = [""] if constants is None else ["", constants]  # the header goes in last
    entries = []
    index = axis_index_names(names)
    widening = widening_lets(func)
    arguments = [p for p in func.params if isinstance(p, Buffer)] + host_buffers(plan)
    wide: dict[Buffer, int] = {}
    uses_wide = uses_bits = False
    shifts: set[tuple[str, str]] = set()
    numbers = {id(c): k for k, c in enumerate(asserts)}
    if len(numbers) != len(asserts):  # matched to launches by identity: one each
        raise BuildError(f"cannot build {func.name!r} for cuda: two asserts share one "
                         "condition object (copy it: polypad.ir.fresh_copy)")
    for launch in plan.structure.launches:
        if is_check(launch.root) and id(launch.root.value.args[0]) in numbers:
            # A top-level assert (CudaTarget.executable): the host checks it here.
            entries.append(f"(None, {numbers.pop(id(launch.root.value.args[0]))})")
            continue
        if is_check(launch.root):  # a parameter fact (CudaTarget.lowered): nothing to run
            continue
        kernel = _Kernel(plan, launch, names, params, boxes, widening)
        kernel.expr.direct = direct
        kernel.expr.guard = checks
        kernel.unwritten = unwritten
        kernel.whole = whole
        kernel.index = index
        kernel.arguments = arguments
        used = {x.buffer for x in walk(launch.root) if isinstance(x, (ir.BufferStore,
                                                                        ir.BufferLoad))}
        for alloc in plan.structure.allocations:
            if alloc.buffer.scope in ("shared", "local") and alloc.buffer in used:
                kernel.declared.add(alloc.buffer)
        parts.append(kernel.text(launch.index, fastmath, plan.structure.lets))
        parts.append(launch_function(launch.index, launch, kernel.expr, scalars))
        entries.append(f"(kernel_{launch.index}, launch_{launch.index})")
        for buffer, nbytes in kernel.wide.items():
            wide[buffer] = max(wide.get(buffer, 0), nbytes)
        uses_wide = uses_wide or kernel.uses_wide
        uses_bits = uses_bits or kernel.expr.uses_bits
        shifts |= kernel.expr.shifts
    if numbers:  # never drop a check the analyses relied on
        raise BuildError(f"cannot build {func.name!r} for cuda: lost track of a top-level "
                         "assert on its way to the launches")
    if checks is not None:
        parts[1:1] = checks.helper_sources()  # before the kernels that call them
    parts[1:1] = [shift_source(op, dtype, numpy_type(dtype)) for op, dtype in sorted(shifts)]
    parts.append(f"KERNELS = ({', '.join(entries)}{',' if len(entries) == 1 else ''})")
    imports = [WIDE_IMPORT.format(version=WIDE_VERSION)] if uses_wide else []
    if uses_bits:
        imports.append(BITS_IMPORT.format(version=BITS_VERSION))
    parts[0] = module_header(constants, imports)
    if wide:
        parts.append(aligned_arguments(arguments, wide))
    return "\n\n\n".join(parts) + "\n"
