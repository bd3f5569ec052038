# Switchboard image: the console built with Node, the server built with Rust, a slim runtime.
FROM node:20-bookworm-slim AS console
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM rust:1-bookworm AS server
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config libssl-dev default-libmysqlclient-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock clippy.toml ./
COPY .cargo ./.cargo
COPY crates ./crates
COPY migrations ./migrations
RUN cargo build --release -p switchboard

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libssl3 libmariadb3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --uid 10001 --home /data switchboard && mkdir -p /data \
    && chown switchboard /data
COPY --from=server /src/target/release/switchboard /usr/local/bin/switchboard
COPY --from=console /src/frontend/dist /app/frontend
ENV FRONTEND_DIR=/app/frontend PORT=3000
WORKDIR /data
# Numeric, so that Kubernetes can check runAsNonRoot (deploy/kubernetes).
USER 10001
EXPOSE 3000
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/switchboard"]
