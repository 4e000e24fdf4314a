# The service image: Node 20 on Debian, running the service built by `npm run build` (tsc, then one bundled file) with plain node.
FROM node:20.20-bookworm-slim
WORKDIR /app
# MALLOC_MMAP_THRESHOLD_: see src/process-env.ts (set before node starts, as `npm start` does).
ENV NODE_ENV=production TZ=UTC HOST=0.0.0.0 PORT=3000 MALLOC_MMAP_THRESHOLD_=131072
COPY package.json package-lock.json ./
# Dev dependencies too (tsc and the type packages build the service); pruned after the build.
RUN npm ci --no-audit --no-fund --include=dev
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
COPY seed ./seed
COPY openapi ./openapi
# Postgres must not run as root: the embedded fallback is for laptops; in compose DATABASE_URL is always set.
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/ready').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "dist/server.mjs"]
