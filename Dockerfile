# Cairn as a container: one image, the Procfile's three processes (web, worker, release) as its
# commands; compose.yaml runs them beside Postgres and an S3 server. Node 24 runs the TypeScript
# directly (type stripping), so there is no build output; `bin/process.js warm` fills Node's
# compile cache at build time, as Heroku's `npm run build` does.
FROM node:24-bookworm-slim

# pg_dump and psql of the Postgres major version the backups serve (15; backups refuse an older
# pg_dump than the server), and CA roots for https to S3, SMTP and webhook receivers.
RUN apt-get update \
  && apt-get install -y --no-install-recommends postgresql-client-15 ca-certificates \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only; argon2 ships prebuilt binaries for linux-x64 and arm64.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY migrations ./migrations
COPY knexfile.ts tsconfig.json Procfile ./
RUN node bin/process.js warm && chown -R node:node node_modules/.cache

ENV NODE_ENV=production PORT=3000
USER node
EXPOSE 3000
# The Procfile's web; compose.yaml's worker and release override it with theirs.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=100", "bin/process.js", "web"]
