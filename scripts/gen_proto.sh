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

# Go: protoc-gen-go and protoc-gen-go-grpc, pinned in the Makefile and
# installed into .tools/bin (GO_PLUGIN_DIR) by `make go-plugins`. The output
# lands in the Go module (clients/go/gen/forge/v1, package forgev1).
go_plugins=${GO_PLUGIN_DIR:-.tools/bin}
for plugin in protoc-gen-go protoc-gen-go-grpc; do
  if [[ ! -x "$go_plugins/$plugin" ]]; then
    echo "missing $go_plugins/$plugin: run 'make go-plugins'" >&2
    exit 1
  fi
done
go_module=github.com/forge-sidecar/forge/clients/go
go_out="$out_root/clients/go"
mkdir -p "$go_out/gen/forge/v1"
rm -f "$go_out"/gen/forge/v1/*.pb.go
python -m grpc_tools.protoc \
  -I proto \
  --plugin=protoc-gen-go="$go_plugins/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$go_plugins/protoc-gen-go-grpc" \
  --go_out="$go_out" \
  --go_opt=module="$go_module" \
  --go-grpc_out="$go_out" \
  --go-grpc_opt=module="$go_module" \
  proto/forge/v1/*.proto

# TypeScript: protoc-gen-es (pinned in clients/typescript/package.json, installed
# by `npm ci` there) writes .ts sources that the SDK compiles. google/rpc's
# error_details.proto (ErrorInfo, BadRequest in rejected requests' trailers)
# comes from the googleapis-common-protos package that grpcio-status installs.
ts_plugin=clients/typescript/node_modules/.bin/protoc-gen-es
if [[ ! -x "$ts_plugin" ]]; then
  echo "missing $ts_plugin: run 'npm ci' in clients/typescript" >&2
  exit 1
fi
rpc_include=$(python -c 'import pathlib, google.rpc; print(pathlib.Path(list(google.rpc.__path__)[0]).parents[1])')
ts_out="$out_root/clients/typescript/src/gen"
rm -rf "$ts_out"
mkdir -p "$ts_out"
python -m grpc_tools.protoc \
  -I proto \
  -I "$rpc_include" \
  --plugin=protoc-gen-es="$ts_plugin" \
  --es_out="$ts_out" \
  --es_opt=target=ts,import_extension=js \
  proto/forge/v1/*.proto \
  google/rpc/error_details.proto

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
  if ! diff -r "$go_out/gen" clients/go/gen >/dev/null 2>&1; then
    diff -rq "$go_out/gen" clients/go/gen >&2 || true
    echo "stale generated Go under clients/go/gen (run 'make proto')" >&2
    stale=1
  fi
  if ! diff -r "$ts_out" clients/typescript/src/gen >/dev/null 2>&1; then
    diff -rq "$ts_out" clients/typescript/src/gen >&2 || true
    echo "stale generated TypeScript under clients/typescript/src/gen (run 'make proto')" >&2
    stale=1
  fi
  ((stale == 0)) || exit 1
  echo "generated stubs are up to date"
fi
