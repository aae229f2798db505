#!/usr/bin/env bash
# Here, before a GPU run: download the cp312 wheels the GPU machine lacks into .whl/
# (git-ignored). Its image has numpy 2.5, with which numba-cuda 0.30.4 cannot compile a
# kernel (np.row_stack is gone), and neither islpy nor z3-solver. About 50 MB: with the
# working tree (about 10 MB) under the 64 MiB a device call carries, hence z3-solver 4.15
# (29 MB) rather than 5.x (38 MB), which pyproject's z3-solver>=4.12 allows.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qxF "/.whl/" .git/info/exclude 2>/dev/null || echo "/.whl/" >> .git/info/exclude
rm -rf .whl && mkdir .whl
platforms=()
for tag in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1 \
           manylinux_2_24 manylinux_2_31 manylinux_2_34 manylinux_2_35; do
    platforms+=(--platform "${tag}_x86_64")
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp "${platforms[@]}" -d .whl \
    numpy==2.3.5 numba-cuda==0.30.4 islpy==2026.2.2 z3-solver==4.15.4.0
ls -s .whl
