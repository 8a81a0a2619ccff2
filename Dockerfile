# syntax=docker/dockerfile:1
# The tether image: `tether memory`, `tether gateway` (and the rest of the CLI) as its entrypoint.
# Stage 1 compiles src/ to dist/ (tsc, with every dependency, no install scripts: nothing native is needed to
# compile); stage 2 installs production dependencies only (better-sqlite3 builds natively if no prebuilt binary
# fits); stage 3 copies both onto a clean base and runs as an unprivileged user: compiled JavaScript, no
# TypeScript sources, no tsx.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts: the package's own `prepare` (the build) was stage 1; better-sqlite3's install script is
# run by the rebuild.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3

FROM node:20-bookworm-slim
# MALLOC_ARENA_MAX: glibc's per-thread malloc arenas held ~20 MB more RSS under load (docs/benchmarks.md).
ENV NODE_ENV=production \
    TETHER_DATA=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# A data folder the unprivileged user owns (the chart mounts a volume here).
RUN mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
EXPOSE 8080 8081
ENTRYPOINT ["node", "--max-semi-space-size=4", "--initial-old-space-size=32", "--heap-growing-percent=20", "/app/bin/tether"]
CMD ["memory", "--host", "0.0.0.0"]
