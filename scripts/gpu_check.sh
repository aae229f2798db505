#!/usr/bin/env bash
# There, on the GPU machine, in one call (about 6 minutes; the wheels from
# scripts/gpu_wheels.sh travel in .whl):
#     run(command="bash scripts/gpu_check.sh", carry=[".whl"], timeout_s=540)
# Installs the carried wheels beside the image's numba, cupy and torch, runs the CUDA
# tests on the GPU itself (CI runs them on the simulator), then bench_cuda.py --variants.
# Everything it prints is also written to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/gpu_out}"
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
    python3 -c "import numpy, numba, numba.cuda, cupy, torch; \
print('numpy', numpy.__version__, 'numba', numba.__version__, 'cupy', cupy.__version__, \
'torch', torch.__version__, 'gpu', numba.cuda.is_available())"
} 2>&1 | tee "$out/versions.txt"
NUMBA_ENABLE_CUDASIM=0 timeout 200 python3 -m pytest -q tests/cuda -p no:cacheprovider \
    2>&1 | tail -15 | tee "$out/tests_gpu.txt"
timeout 330 python3 benchmarks/bench_cuda.py --variants 2>&1 | tee "$out/bench_cuda.txt"
