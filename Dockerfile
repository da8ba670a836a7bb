# Forge sidecar image: the gRPC server plus the bundled CPU llama-server and
# Gemma 3 270M model. Point it at another model with --model (mount the GGUF)
# or at an external llama-server with --llama-url / FORGE_LLAMA_URL.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY forge_core ./forge_core
COPY server ./server
COPY clients/python ./clients/python
RUN pip install --no-cache-dir --prefix=/install '.[server]'

FROM python:3.11-slim
# libgomp1: llama-server's OpenMP runtime.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /install /usr/local
RUN useradd --create-home --uid 10001 forge
USER forge
# 0.0.0.0 so the kubelet's gRPC probe reaches the pod IP. Plaintext and no
# authentication beyond loopback needs FORGE_INSECURE=1: set it only where
# the pod network is the boundary; otherwise mount a token file
# (FORGE_AUTH_TOKEN_FILE) or certificates (FORGE_TLS_CERT, FORGE_TLS_KEY) and
# the server starts without it.
ENV FORGE_HOST=0.0.0.0 \
    FORGE_PORT=50051 \
    FORGE_CACHE_DIR=/home/forge/.cache/forge
# Assemble the bundled model at build time so start-up does not pay for it.
RUN python -c "from forge_core.llama_process import bundled_model; print(bundled_model())"
EXPOSE 50051
# Kubernetes: use a gRPC probe on port 50051 (grpc.health.v1 is served).
STOPSIGNAL SIGTERM
ENTRYPOINT ["forge-server"]
