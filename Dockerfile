# mdadmit-webhook image: built on Debian 12 with the project's own set-up script, run on a
# slim Debian 12 as a non-root user with only the binary and the runtime libraries it links.
#   docker build -t mdadmit:0.1.0 .
FROM debian:12 AS build
WORKDIR /src
COPY tools/setup.sh tools/setup.sh
RUN tools/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# Profile-guided: built instrumented, trained on loopback, built again (bench/RESULTS.md).
RUN tools/pgo-build.sh /build \
    && strip /build/server/mdadmit-webhook /build/cli/mdadmit

FROM debian:12-slim
# The shared libraries the binaries link (libyaml, spdlog, fmt, OpenSSL, liburing) and CA
# roots; Boost is compiled in.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libyaml-0-2 libspdlog1.10 libfmt9 libssl3 liburing2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/server/mdadmit-webhook /build/cli/mdadmit /usr/local/bin/
# The rule data is built into the binary; --rules-data replaces it at start-up.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/mdadmit-webhook"]
