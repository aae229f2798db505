"""``codegen.build(f, vector_width=...)``: the option is checked, both widths give
the reference's results, 512 bits reach the machine code where the CPU has
AVX-512, and kernels of different widths never share cached code.  Timings
are benchmarks/bench_vector_width.py's business, never asserted here."""

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import codegen_kernels as K
import numpy as np
import pytest
from codegen_support import copy, random_args, run_both

import codegen
from codegen.numba import compiler
from codegen.numba import vector_width as widths
from polypad.errors import ArgumentTypeError, ArgumentValueError, BuildArgumentError, BuildError
from polypad.script import parse

HERE = Path(__file__).parent
ROOT = HERE.parent.parent

# Plenty of vectorizable work in a parallel loop, whose body Numba lowers apart
# from the kernel: the width must reach it too.
SCALE = '''
@T.prim_func
def scale(A: T.Buffer((8, 256), "float32"), C: T.Buffer((8, 256), "float32"),
          B: T.Buffer((8, 256), "float32")):
    for i in T.parallel(8):
        for j in T.serial(256):
            B[i, j] = A[i, j] * C[i, j] + 1.0
'''

# A vectorized loop under fastmath="full" is compiled in a helper of its own.
ROW_SUM = '''
@T.prim_func
def row_sum(A: T.Buffer((4, 512), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        B[i] = 0.0
        for j in T.vectorized(512):
            B[i] = B[i] + A[i, j]
'''

needs_avx512 = pytest.mark.skipif(not widths.cpu_has_avx512(),
                                  reason="the CPU has no AVX-512")


@pytest.fixture(scope="module", autouse=True)
def fresh_cache(tmp_path_factory):
    # Numba shows no assembly for code it loaded from its cache: compile afresh.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(compiler.CACHE_ENV, str(tmp_path_factory.mktemp("kernels")))
        codegen.clear_cache()
        yield
    kernel.cache_clear()


@functools.cache
def kernel(source: str, width: int | None, fastmath="contract") -> codegen.Kernel:
    return codegen.build(parse(source), vector_width=width, fastmath=fastmath).compile()


def float_registers(k: codegen.Kernel) -> set[str]:
    """The registers ``k``'s packed float32 arithmetic uses: ``{"ymm", "zmm"}`` and
    the like.  (Index or float64 arithmetic beside a float32 loop may fill zmm
    registers at 256 bits: LLVM caps the float32 vectors, not every type.)"""
    asm = k._impl.inspect_asm(k._impl.signatures[0])
    ops = re.findall(r"^\s*v(?:fmadd\d+|fnmadd\d+|add|mul)ps\s+(.*)$", asm, re.MULTILINE)
    return {register for line in ops for register in re.findall(r"%([xyz]mm)\d+", line)}


@pytest.mark.parametrize("value", [128, 1024, 0, -512, 384])
def test_an_unknown_width_is_a_value_error(value):
    with pytest.raises(ArgumentValueError, match="vector_width must be one of None, 256 or 512"):
        codegen.build(K.elementwise(), vector_width=value)


@pytest.mark.parametrize("value", ["512", 512.0, True, [512], np.float32(256)])
def test_a_value_of_another_type_is_a_type_error(value):
    with pytest.raises(BuildArgumentError, match="parameter vector_width takes None, 256 or 512"):
        codegen.build(K.elementwise(), vector_width=value)
    with pytest.raises(ArgumentTypeError):  # whatever the target
        codegen.build(K.elementwise(), target="python", vector_width=value)
    assert issubclass(BuildArgumentError, BuildError)


def test_the_default_is_512_exactly_where_the_cpu_has_avx512():
    assert widths.resolve(None) == (512 if widths.cpu_has_avx512() else None)
    assert [widths.resolve(w) for w in widths.WIDTHS] == [256, 512]
    assert codegen.build(K.elementwise(), vector_width=256).source == \
        codegen.build(K.elementwise()).source  # the width is no part of the text


@pytest.mark.numba
@pytest.mark.parametrize("source", [SCALE, ROW_SUM])
def test_both_widths_give_the_reference_results(source):
    # Strict IEEE: bitwise the reference's floats at either width.
    for width in widths.WIDTHS:
        k = kernel(source, width, None)
        for seed in range(2):
            run_both(k, random_args(k.func, seed))


@pytest.mark.numba
def test_contracted_results_do_not_depend_on_the_width():
    # One fused multiply-add per element, whatever the vectors.
    for seed in range(2):
        args = random_args(parse(SCALE), seed)
        results = []
        for width in widths.WIDTHS:
            ours = copy(args)
            kernel(SCALE, width)(*ours)
            results.append(ours[2])
        np.testing.assert_array_equal(*results)


@pytest.mark.numba
def test_a_reordered_sum_stays_close_at_both_widths():
    # fastmath="full" lets the vectorized sum be reassociated: the lanes differ
    # with the width, so the result may differ by rounding.
    for width in widths.WIDTHS:
        k = kernel(ROW_SUM, width, "full")
        args = random_args(k.func, 0)
        ours = copy(args)
        k(*ours)
        np.testing.assert_allclose(ours[1], args[0].astype(np.float64).sum(axis=1), rtol=1e-4)


@needs_avx512
@pytest.mark.numba
def test_512_bits_use_zmm_registers_and_256_do_not():
    # The parallel loop's body is where the work is: it must be marked too.
    assert "zmm" in float_registers(kernel(SCALE, 512))
    assert "zmm" not in float_registers(kernel(SCALE, 256))
    assert "ymm" in float_registers(kernel(SCALE, 256))
    # The vectorized loop's helper under full fast-math.
    assert "zmm" in float_registers(kernel(ROW_SUM, 512, "full"))
    assert "zmm" not in float_registers(kernel(ROW_SUM, 256, "full"))
    assert "ymm" in float_registers(kernel(ROW_SUM, 256, "full"))


@needs_avx512
@pytest.mark.numba
def test_the_default_is_512_bits():
    assert "zmm" in float_registers(kernel(SCALE, None))


def test_each_width_has_a_module_of_its_own():
    source = codegen.build(K.elementwise()).source
    names = {w: compiler.module_name(source, w) for w in widths.WIDTHS}
    assert len(set(names.values())) == 2
    assert compiler.module_name(source) == compiler.module_name(source, None)
    if widths.cpu_has_avx512():
        assert compiler.module_name(source) == names[512]


# Builds the elementwise kernel at each width, then reports Numba's cache statistics.
SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {here!r})
import codegen, codegen_kernels as K
report = {{}}
for width in (256, 512):
    k = codegen.build(K.elementwise(), vector_width=width).compile()
    a, b = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    k(a, b)
    stats = k._impl.stats
    report[width] = [bool((b == 2 * a + 1).all()), sum(stats.cache_hits.values()),
                     sum(stats.cache_misses.values())]
print(json.dumps(report))
"""


@pytest.mark.numba
def test_a_second_process_loads_each_width_from_its_own_cache(tmp_path):
    env = dict(os.environ, POLYPAD_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", SCRIPT.format(here=str(HERE))], env=env,
                              capture_output=True, text=True, check=True, cwd=ROOT)
        return json.loads(done.stdout.strip().splitlines()[-1])

    # [correct, cache hits, cache misses] per width.
    assert run() == {"256": [True, 0, 1], "512": [True, 0, 1]}
    assert run() == {"256": [True, 1, 0], "512": [True, 1, 0]}
    source = codegen.build(K.elementwise()).source
    for width in widths.WIDTHS:
        stem = compiler.module_name(source, width)
        assert (tmp_path / f"{stem}.py").read_text() == source
        assert list((tmp_path / "__pycache__").glob(f"{stem}.kernel-*.nbi"))
