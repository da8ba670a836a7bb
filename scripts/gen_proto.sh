#!/usr/bin/env bash
# Generates the stubs of every SDK from proto/. With --check, generates into a
# scratch directory and fails if the committed stubs differ (CI runs this).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[[ "${1:-}" == "--check" ]] && check=1

out_root=.
if ((check)); then
  out_root=$(mktemp -d)
  trap 'rm -rf "$out_root"' EXIT
fi

py_out="$out_root/clients/python"
mkdir -p "$py_out/forge/v1"
rm -f "$py_out"/forge/v1/*_pb2*.py "$py_out"/forge/v1/*_pb2*.pyi

python -m grpc_tools.protoc \
  -I proto \
  --python_out="$py_out" \
  --grpc_python_out="$py_out" \
  --mypy_out="$py_out" \
  --mypy_grpc_out="$py_out" \
  proto/forge/v1/*.proto

if ((check)); then
  stale=0
  for f in "$py_out"/forge/v1/*_pb2*; do
    rel=${f#"$out_root/"}
    if ! cmp -s "$f" "$rel"; then
      echo "stale generated file: $rel (run 'make proto')" >&2
      stale=1
    fi
  done
  for f in clients/python/forge/v1/*_pb2*; do
    [[ -e "$out_root/$f" ]] || { echo "generated file no longer produced: $f" >&2; stale=1; }
  done
  ((stale == 0)) || exit 1
  echo "generated stubs are up to date"
fi
