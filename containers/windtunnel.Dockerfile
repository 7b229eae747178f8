# The image the model gateway and the MCP mocks run in: `wt gateway serve`, `wt mcp serve --pack /packs/P`.
# Built offline by windtunnel._engine.images.build_windtunnel_image (legacy builder, network "none").
# The build context holds this file, wheels/ (windtunnel's dependencies plus their requirements.txt) and
# app-wheels/ (the windtunnel wheel built from the repo), all made on the host for the base image's
# Python. Packs are mounted at run time at /packs (read-only is enough).
ARG BASE_IMAGE=python:3.12-slim

# Dependencies in their own stage, so the dependency wheels never land in a layer of the final image.
FROM ${BASE_IMAGE} AS dependencies
LABEL windtunnel.build-stage=dependencies
COPY wheels/ /wheels/
RUN python3 -m venv /opt/windtunnel \
 && /opt/windtunnel/bin/pip install --no-index --find-links /wheels --no-cache-dir \
      --disable-pip-version-check -r /wheels/requirements.txt

FROM ${BASE_IMAGE}
COPY --from=dependencies /opt/windtunnel /opt/windtunnel
# Everything above is cached while the dependencies stay the same; a source edit redoes only what
# follows. The dependencies are already installed, so this resolves windtunnel's requirements from them.
COPY app-wheels/ /wheels/
RUN /opt/windtunnel/bin/pip install --no-index --find-links /wheels --no-cache-dir \
      --disable-pip-version-check windtunnel \
 && rm -rf /wheels \
 && mkdir -p /packs /work
ENV PATH=/opt/windtunnel/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN wt --version
WORKDIR /work
ENTRYPOINT ["wt"]
CMD ["--help"]
