#!/usr/bin/env bash
# There, on the GPU machine, in one call (the wheels from scripts/gpu_wheels.sh travel
# in .whl):
#     run(command="bash scripts/gpu_check.sh sweep tests", carry=[".whl"], timeout_s=540)
# Installs the carried wheels beside the image's numba, cupy and torch, then runs the
# steps named, in their order, each under its own time limit:
#   sweep  benchmarks/bench_cuda_sweep.py, the schedules' parameter grid (about 5 min;
#          SWEEP_ONLY and SWEEP_MATCH narrow it, as its --only and --match; the
#          elementwise variants, wide loads included: SWEEP_ONLY=elementwise, under a minute);
#   bench  benchmarks/bench_cuda.py, the examples' chosen schedules (about 2 min);
#   first  benchmarks/bench_cuda_first_call.py: each default kernel's first call in a cold
#          process and in a second one sharing its cache directory (about 1 min);
#   tests  the CUDA tests on the GPU itself (CI runs them on the simulator; 2 min cap;
#          TESTS names other test files).
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
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(bench tests)
for step in "${steps[@]}"; do
    case "$step" in
        sweep) timeout 300 python3 benchmarks/bench_cuda_sweep.py --only "${SWEEP_ONLY:-sgemm,conv,rowsum,elementwise}" \
                  --match "${SWEEP_MATCH:-}" 2>&1 | tee "$out/sweep.txt" ;;
        bench) timeout 240 python3 benchmarks/bench_cuda.py 2>&1 | tee "$out/bench_cuda.txt" ;;
        first) timeout 180 python3 benchmarks/bench_cuda_first_call.py 2>&1 | tee "$out/first_call.txt" ;;
        tests) NUMBA_ENABLE_CUDASIM=0 timeout 120 python3 -m pytest -q ${TESTS:-tests/cuda} \
                   -p no:cacheprovider 2>&1 | tail -40 | tee "$out/tests_gpu.txt" ;;
        *) echo "gpu_check.sh: unknown step $step (sweep, bench, first, tests)"; exit 2 ;;
    esac
done
