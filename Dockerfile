# Forge sidecar image: the gRPC server plus the bundled llama-server (a Vulkan
# build of llama.cpp with a CPU backend) and Gemma 3 270M model. Point it at
# another model with --model (mount the GGUF) or at an external llama-server
# with --llama-url / FORGE_LLAMA_URL.
#
# GPU (docs/gpu-host.md). By default (GPU=vulkan) the image is GPU-ready for
# NVIDIA hosts and runs on the CPU everywhere else:
#   docker build -t forge-sidecar .
#   docker run --gpus all forge-sidecar              # NVIDIA container toolkit
# `forge-server --check` prints the device llama-server uses. Variants:
#   --build-arg GPU=vulkan  (default) + a Vulkan manifest for NVIDIA's driver
#                           and the libraries its GLX driver library needs
#                           (~5 MB), NVIDIA_DRIVER_CAPABILITIES with graphics
#   --build-arg GPU=none    CPU only: none of the above
ARG GPU=vulkan

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY forge_core ./forge_core
COPY server ./server
COPY clients/python ./clients/python
RUN pip install --no-cache-dir --prefix=/install '.[server]'

FROM python:3.11-slim AS runtime-none
# libgomp1: llama-server's OpenMP runtime.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 \
 && rm -rf /var/lib/apt/lists/*

FROM runtime-none AS runtime-vulkan
# The NVIDIA container toolkit mounts the host driver's Vulkan libraries only
# for the `graphics` capability (the default is compute,utility). The image
# ENV below asks for it, so `docker run --gpus all` and a Kubernetes
# `nvidia.com/gpu` request need nothing else; without the NVIDIA runtime it
# is never read. NVIDIA_VISIBLE_DEVICES is deliberately not set: on a node
# whose default runtime is nvidia it would hand every GPU to every container
# of this image, requested or not (`--gpus` and the device plugin set it).
#
# The driver's own Vulkan manifest (nvidia_icd.json, mounted by the toolkit)
# names libGLX_nvidia.so.0, which on a headless server (no display, no
# /dev/dri) loads but creates no Vulkan instance, so llama-server lists no
# device and silently runs on the CPU. NVIDIA's headless entry point is
# libEGL_nvidia.so.0 (also mounted with `graphics`, and it needs nothing from
# the image): this manifest names it. Where both work, llama.cpp keeps one
# device per GPU (it matches them by UUID); where neither library is mounted
# the loader skips both without a word.
# libglvnd0 (libGLdispatch), libx11-6 and libxext6: what libGLX_nvidia.so.0
# links against, so the toolkit's GLX manifest works where it can (a host
# with a display stack). libvulkan1: the system loader, for a --llama-binary
# of your own (the bundled llama-server carries its own).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libvulkan1 libglvnd0 libx11-6 libxext6 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/share/vulkan/icd.d \
 && printf '%s\n' '{"file_format_version": "1.0.1", "ICD": {"library_path": "libEGL_nvidia.so.0", "api_version": "1.3.0"}}' \
      > /usr/local/share/vulkan/icd.d/nvidia_egl_icd.json
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics

# GPU picks the stage above: runtime-vulkan or runtime-none.
FROM runtime-${GPU}
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
