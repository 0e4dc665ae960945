# syntax=docker/dockerfile:1
# officehub: one image for the API (`serve`) and the worker (`worker`). Both migrate the
# database on start (PostgreSQL: one process at a time, under an advisory lock).

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/officehub
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/officehub/bin/pip install .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --create-home --home-dir /var/lib/officehub officehub
COPY --from=build /opt/officehub /opt/officehub
COPY examples /opt/officehub/examples
ENV PATH=/opt/officehub/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    OFFICEHUB_DATA_DIR=/var/lib/officehub \
    OFFICEHUB_HOST=0.0.0.0 \
    OFFICEHUB_PORT=8000 \
    OFFICEHUB_LOG_FORMAT=json
USER officehub
WORKDIR /var/lib/officehub
VOLUME ["/var/lib/officehub"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('OFFICEHUB_PORT', '8000'), timeout=4)"]
ENTRYPOINT ["officehub"]
CMD ["serve"]
