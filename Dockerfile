# syntax=docker/dockerfile:1
# Ferry: build with the official Swift image, run on slim Debian with only the runtime libraries.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        libcurl4-openssl-dev libssl-dev libsqlite3-dev pkg-config \
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
# Only the runtime libraries the binary links (tests/docker/check_image.py checks this against ldd),
# CA certificates for https origins, and curl for the health check.
RUN apt-get update && apt-get install -y --no-install-recommends \
        libcurl4 libssl3 libsqlite3-0 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/spool/ferry --shell /usr/sbin/nologin ferry \
    && install -d -o ferry -g ferry -m 0750 /var/spool/ferry
COPY --from=build /out/ /
ENV FERRY_HOST=0.0.0.0 \
    FERRY_PORT=8080 \
    FERRY_SPOOL=/var/spool/ferry \
    FERRY_PUBLIC=/usr/local/share/ferry/Public
USER ferry
VOLUME ["/var/spool/ferry"]
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/usr/bin/curl", "-fsS", "http://127.0.0.1:8080/healthz"]
# Exec form: ferry is PID 1 and receives SIGTERM itself (no shell in between to swallow it).
ENTRYPOINT ["/usr/local/bin/ferry"]
CMD ["serve"]
