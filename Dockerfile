# syntax=docker/dockerfile:1
# Production image for both roles: the API (default command) and the Temporal worker
# (`node dist/src/temporal/worker-main.js`). Debian slim, not Alpine: Temporal's native core
# (@temporalio/core-bridge) is built against glibc and fails to load on musl (ERR_DLOPEN_FAILED).

FROM node:24-bookworm-slim AS build
WORKDIR /app
# Dependencies first, so source edits reuse this layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    FILE_STORAGE_DIR=/data/files
WORKDIR /app
# Root-owned and read-only for the app user; only /data is writable.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
# Everything the service runs is compiled into dist (src, workflows, activities, migrations). Copy here
# any non-TypeScript runtime asset that is added later (templates, static files).
COPY --from=build /app/dist ./dist
# Stylesheets and scripts served as they are (no build step): the customer pages and the dashboard.
COPY --from=build /app/src/http/public ./src/http/public
COPY --from=build /app/src/security/common-passwords-100k.txt ./src/security/common-passwords-100k.txt
# /data is where a named volume is mounted: created here so the volume starts owned by `node`.
RUN mkdir -p /data/files && chown -R node:node /data
USER node
EXPOSE 3000
CMD ["node", "--max-semi-space-size=8", "dist/src/http/server.js"]
