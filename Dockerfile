# Cairn as a container: one image, the Procfile's three processes (web, worker, release) as its
# commands; compose.yaml runs them beside Postgres and an S3 server. Node 24 runs the TypeScript
# directly (type stripping), so there is no build output; `bin/process.js warm` fills Node's
# compile cache at build time, as Heroku's `npm run build` does.
FROM node:24-bookworm-slim

# pg_dump and psql for the environments' own databases, which may run any Postgres up to 17:
# backups refuse a pg_dump older than the server, and a newer one reads older servers, so the
# newest client, from the PostgreSQL project's apt repository (Debian 12 ships 15 only;
# https://www.postgresql.org/download/linux/debian/). CA roots for https to S3, SMTP and webhooks.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates curl \
  && install -d /usr/share/postgresql-common/pgdg \
  && curl -fsSo /usr/share/postgresql-common/pgdg/apt.postgresql.org.asc https://www.postgresql.org/media/keys/ACCC4CF8.asc \
  && echo "deb [signed-by=/usr/share/postgresql-common/pgdg/apt.postgresql.org.asc] https://apt.postgresql.org/pub/repos/apt bookworm-pgdg main" \
    > /etc/apt/sources.list.d/pgdg.list \
  && apt-get update \
  && apt-get install -y --no-install-recommends postgresql-client-17 \
  && apt-get purge -y curl && apt-get autoremove -y \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only; argon2 ships prebuilt binaries for linux-x64 and arm64.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY migrations ./migrations
# The project's documents: the web serves them at /docs (src/console/docs.ts).
COPY docs ./docs
COPY knexfile.ts tsconfig.json Procfile ./
RUN node bin/process.js warm && chown -R node:node node_modules/.cache

# CAIRN_TRUSTED_PROXY_HOPS is left unset: 0 (clients reach the container directly, the socket's
# address is theirs), or 1 when the image runs on a Heroku dyno. Behind a proxy, set it at run time.
# NODE_ENV=production: test environments may not call private addresses unless CAIRN_PRIVATE_TARGETS=allow.
ENV NODE_ENV=production PORT=3000
USER node
EXPOSE 3000
# The Procfile's web; compose.yaml's worker and release override it with theirs.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=100", "bin/process.js", "web"]
