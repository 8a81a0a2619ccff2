# syntax=docker/dockerfile:1
# The tether image: `tether memory`, `tether gateway` (and the rest of the CLI) as its entrypoint.
# Stage 1 installs production dependencies only (better-sqlite3 builds natively if no prebuilt binary fits);
# stage 2 copies them with the sources onto a clean base and runs as an unprivileged user.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# MALLOC_ARENA_MAX: glibc's per-thread malloc arenas held ~20 MB more RSS under load (docs/benchmarks.md).
ENV NODE_ENV=production \
    TETHER_DATA=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
# A data folder the unprivileged user owns (the chart mounts a volume here).
RUN mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
EXPOSE 8080 8081
ENTRYPOINT ["node", "--max-semi-space-size=4", "/app/bin/tether"]
CMD ["memory", "--host", "0.0.0.0"]
