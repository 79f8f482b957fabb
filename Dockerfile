# syntax=docker/dockerfile:1
# Ferry: build with the official Swift image, run on slim Debian with only the runtime libraries.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        libcurl4-openssl-dev libssl-dev libsqlite3-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve packages in a layer of their own so source edits do not refetch them.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product ferry --static-swift-stdlib \
    && install -D .build/release/ferry /out/usr/local/bin/ferry
COPY Public /out/usr/local/share/ferry/Public

FROM debian:bookworm-slim AS run
# Only the runtime libraries the binary links (Tests/docker/check_image.py checks this against ldd) and
# CA certificates for https origins. No curl: the health check is `ferry health`.
RUN apt-get update && apt-get install -y --no-install-recommends \
        libcurl4 libssl3 libsqlite3-0 libpq5 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/spool/ferry --shell /usr/sbin/nologin ferry \
    && install -d -o ferry -g ferry -m 0750 /var/spool/ferry
COPY --from=build /out/ /
# OCI labels, after the last RUN so that a new version does not rebuild the layers above. A release build sets
#   --build-arg FERRY_VERSION=1.2.0 --build-arg FERRY_REVISION=$(git rev-parse HEAD)
#   --build-arg FERRY_SOURCE=<repository URL> --build-arg FERRY_LICENSES=<SPDX expression>
ARG FERRY_VERSION=dev
ARG FERRY_REVISION=unknown
ARG FERRY_SOURCE=
ARG FERRY_LICENSES=NOASSERTION
LABEL org.opencontainers.image.title="Ferry" \
      org.opencontainers.image.description="Server-side download proxy: fetches files over the server's link into a spool, resumes, verifies SHA-256, reports progress over Server-Sent Events and serves the files with HTTP Range support." \
      org.opencontainers.image.version="${FERRY_VERSION}" \
      org.opencontainers.image.revision="${FERRY_REVISION}" \
      org.opencontainers.image.source="${FERRY_SOURCE}" \
      org.opencontainers.image.licenses="${FERRY_LICENSES}" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"
ENV FERRY_HOST=0.0.0.0 \
    FERRY_PORT=8080 \
    FERRY_SPOOL=/var/spool/ferry \
    FERRY_PUBLIC=/usr/local/share/ferry/Public
USER ferry
VOLUME ["/var/spool/ferry"]
EXPOSE 8080
STOPSIGNAL SIGTERM
# `ferry health` asks /healthz of the address FERRY_HOST and FERRY_PORT give `ferry serve` (0.0.0.0 is asked on
# 127.0.0.1), so a changed FERRY_PORT needs no change here; its own deadline is below Docker's.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/ferry", "health", "--timeout", "2s"]
# Exec form: ferry is PID 1 and receives SIGTERM itself (no shell in between to swallow it).
ENTRYPOINT ["/usr/local/bin/ferry"]
CMD ["serve"]
