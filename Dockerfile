# One image for every KaLaro service; the compose file picks the module to run.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY libs ./libs
COPY services ./services
COPY web ./web
RUN pip install .
RUN useradd --system --uid 10001 kalaro && mkdir -p /app/var && chown kalaro /app/var
USER kalaro
