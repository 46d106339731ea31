# One image for every KaLaro service; the command picks the service (docker-compose.yml,
# deploy/kustomize/). Build: `docker build -t kalaro:0.1.0 .` (docs/deploy.md).
#
# The Python here must be the one requirements.lock was compiled for (3.11: see its
# header); the tag is pinned so a rebuild gets the same interpreter.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

# --- build: a virtualenv with exactly the locked runtime dependencies ----------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/kalaro
COPY requirements.lock /tmp/requirements.lock
# Every package pinned and checked against its hash: nothing newer sneaks in, and no dev
# tools (those are in requirements-dev.lock). A dependency missing from the lock fails
# the build here instead of being fetched unpinned.
RUN /opt/kalaro/bin/pip install --require-hashes --only-binary=:all: -r /tmp/requirements.lock

# --- runtime: the venv, the sources, a non-root user ---------------------------------
FROM ${PYTHON_IMAGE}
# The code runs from /app (not installed into site-packages): the gateway serves web/
# from beside services/ (services/gateway/app.py WEB_DIR). Health and HTTP servers bind
# every interface inside a container; the network policy decides who may reach them.
ENV PATH=/opt/kalaro/bin:$PATH \
    PYTHONPATH=/app/libs:/app \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    KALARO_HTTP_HOST=0.0.0.0 \
    KALARO_HEALTH_HOST=0.0.0.0 \
    KALARO_VAR_DIR=/app/var
RUN groupadd --system --gid 10001 kalaro \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home \
      --shell /usr/sbin/nologin kalaro \
 && mkdir -p /app/var/keys \
 && chown -R 10001:10001 /app/var \
 && chmod 0700 /app/var/keys
COPY --from=build /opt/kalaro /opt/kalaro
WORKDIR /app
COPY libs ./libs
COPY services ./services
COPY web ./web
COPY --chmod=0755 deploy/docker/healthcheck.py /usr/local/bin/kalaro-healthcheck
# Byte-compiled as root: the code stays read-only to the service user.
RUN python -m compileall -q libs services
USER 10001:10001
# 8000: the gateway's HTTP and WebSocket port (also its /healthz, /readyz, /metrics).
# 9100: every other service's health and metrics server (KALARO_HEALTH_PORT).
EXPOSE 8000 9100
# Services drain on SIGTERM (finish requests in flight, then close).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["kalaro-healthcheck"]
CMD ["python", "-m", "services.gateway"]
