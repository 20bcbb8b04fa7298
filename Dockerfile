# syntax=docker/dockerfile:1
#
# The skein image: a static (musl) release build of the `skein` binary on an
# empty base, with only the binary, CA certificates and an empty data
# directory, running as an unprivileged user.
#
#   docker build -t <your-registry>/skein:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t <your-registry>/skein:0.1.0 --push .
#
# The chart (charts/skein) runs it with a read-only root file system and
# its data directory on a volume. See docs/chart.md.

# The workspace's rust-version (Cargo.toml).
ARG RUST_VERSION=1.89

FROM rust:${RUST_VERSION}-bookworm AS builder
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# musl-tools: a C toolchain for the static target (ring and mimalloc build C);
# protobuf-compiler: etcd-client's build script compiles etcd's .proto files.
# Build-stage tools only (nothing of them reaches the image): bookworm's
# versions, unpinned.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools protobuf-compiler \
 && rm -rf /var/lib/apt/lists/*
# The static target for the platform being built (buildx sets TARGETARCH).
ARG TARGETARCH
RUN case "${TARGETARCH:-amd64}" in \
      amd64) echo x86_64-unknown-linux-musl ;; \
      arm64) echo aarch64-unknown-linux-musl ;; \
      *) echo "unsupported TARGETARCH ${TARGETARCH}" >&2; exit 1 ;; \
    esac > /rust-target \
 && rustup target add "$(cat /rust-target)"
WORKDIR /src
COPY . .
# /version reports these (apiserver/build.rs); .git is not in the build
# context, so pass them:
#   --build-arg SKEIN_GIT_COMMIT=$(git rev-parse HEAD) --build-arg SKEIN_GIT_TREE_STATE=clean
#   --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
ARG SKEIN_GIT_COMMIT
ARG SKEIN_GIT_TREE_STATE
ARG SOURCE_DATE_EPOCH
ENV PROTOC=/usr/bin/protoc
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    target="$(cat /rust-target)" \
 && export "CC_$(echo "$target" | tr - _)=musl-gcc" \
 && cargo build --locked --release --bin skein --target "$target" \
 && install -D -m 0755 "target/$target/release/skein" /out/usr/local/bin/skein \
 && install -d -m 0750 /out/var/lib/skein

FROM scratch
COPY --from=builder /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=builder /out/usr/local/bin/skein /usr/local/bin/skein
COPY --from=builder --chown=65532:65532 /out/var/lib/skein /var/lib/skein
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
# An unprivileged user and group (no passwd entry needed).
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/skein"]
CMD ["serve", "--bind-address=0.0.0.0", "--data-dir=/var/lib/skein"]
LABEL org.opencontainers.image.title="skein" \
      org.opencontainers.image.description="Skein: a multi-cluster Kubernetes control plane (one binary, the native Kubernetes API)" \
      org.opencontainers.image.licenses="Apache-2.0"
