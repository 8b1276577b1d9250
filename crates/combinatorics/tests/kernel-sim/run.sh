#!/bin/sh
# Runs kernels-cuda/combinatorics.cu on the CPU: every block's threads become std::threads,
# __syncthreads a std::barrier, shared memory a static buffer (blocks run one at a time), and
# compares the kernels' results with std::next_permutation and a brute-force search.
# A check of the kernels' logic (indexing, tiles, barriers, reduction, ties) on machines
# without a GPU; it says nothing about speed. Needs g++ with C++20.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/kernels-cuda/common.cuh" "$here/prelude.h" "$here/sim.cpp" "$tmp/"
sed -e 's/extern __shared__ __align__(16) unsigned char tile\[\];/unsigned char* tile = g_dyn_smem;/' \
    -e 's/extern __shared__ double m\[\];/double* m = (double*)g_dyn_smem;/' \
    -e 's/__shared__ double s_score/static double s_score/' \
    -e 's/__shared__ u64 s_rank/static u64 s_rank/' \
    -e 's/extern "C" //' \
    "$root/kernels-cuda/combinatorics.cu" > "$tmp/kern.cpp"
g++ -std=c++20 -O2 -pthread "$tmp/sim.cpp" -o "$tmp/sim"
"$tmp/sim"
