# A Python runtime built on windtunnel-inject (packages/windtunnel-inject), served over Contract C v1 on
# WT_INJECT_PORT: the one Dockerfile of runtimes/reference, runtimes/openai-agents and runtimes/pydantic-ai,
# named by their runtime.toml (see docs/writing-a-runtime.md):
#
#   [image]
#   build = "."
#   dockerfile = "windtunnel:python-runtime"
#   packages = ["windtunnel:windtunnel-inject"]
#   args = { RUNTIME_PACKAGE = "my_runtime" }
#
# Builds with no network, from what Wind Tunnel stages on the host for the base image's Python: wheels/
# (the runtime's requirements.txt and its local packages' dependencies, listed in wheels/requirements.txt),
# package-wheels/ (the local packages themselves) and npm/ (the tarballs of [image] npm, often empty). RUNTIME_PACKAGE is a directory of the build context
# (the runtime's directory): the Python package that `python -m` runs, which calls windtunnel_inject.serve().
ARG BASE_IMAGE=python:3.12-slim

# npm packages the runtime.toml pins ([image] npm = ["name@1.2.3", ...]), packed on the host into npm/ and
# unpacked here, each under /opt/npm/<its tarball's name>: a native CLI shipped in an npm platform package
# (Codex) runs from there with no Node.js. A stage of its own keeps the tarballs out of the image's layers.
FROM ${BASE_IMAGE} AS npm
COPY npm /npm
RUN mkdir -p /opt/npm && for tgz in /npm/*.tgz; do \
      [ -e "$tgz" ] || continue; \
      dir="/opt/npm/$(basename "$tgz" .tgz)"; \
      mkdir -p "$dir" && tar -xzf "$tgz" -C "$dir" --strip-components=1 --no-same-owner || exit 1; \
    done

FROM ${BASE_IMAGE}
ARG RUNTIME_PACKAGE
RUN test -n "${RUNTIME_PACKAGE}" \
 || { echo 'set [image] args = { RUNTIME_PACKAGE = "<your package>" } in runtime.toml' >&2; exit 1; }

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    WT_INJECT_PORT=8647 \
    RUNTIME_PACKAGE=${RUNTIME_PACKAGE}
RUN python3 -m venv /opt/venv

# Dependencies first: they change rarely, so a source edit rebuilds only the layers below.
COPY wheels /wheels
RUN /opt/venv/bin/pip install --no-cache-dir --no-index --find-links /wheels -r /wheels/requirements.txt
COPY package-wheels /package-wheels
RUN /opt/venv/bin/pip install --no-cache-dir --no-index --find-links /wheels /package-wheels/*.whl

COPY --from=npm /opt/npm /opt/npm
COPY ${RUNTIME_PACKAGE} /app/${RUNTIME_PACKAGE}
# Bytecode at build time: as `nobody` the runtime cannot write it, and every container would compile again.
RUN /opt/venv/bin/python -m compileall -q /app
WORKDIR /app
USER nobody
EXPOSE 8647
# The package validates the WT_* environment (windtunnel_inject.serve) and listens on
# 0.0.0.0:${WT_INJECT_PORT}. A shell only to expand the variable; exec replaces it, so Python is PID 1 and
# the engine's stop signal reaches it.
CMD ["/bin/sh", "-c", "exec /opt/venv/bin/python -m \"${RUNTIME_PACKAGE}\""]
