# envsync's container image: `docker build -t envsync .` (podman: add `--format docker`, or the
# HEALTHCHECK is dropped). docs/container.md tells how to run it.
#
# `npm run test:image` builds this file with podman and runs the image (test/image/). Beside it,
# test/system/dockerfile.test.ts carries the steps out itself, with no container engine: the
# deps and build stages' RUN steps verbatim, the final stage's COPY and RUN steps on a scratch
# tree, then the ENTRYPOINT, CMD, ENV and HEALTHCHECK as written here. A step that test does not
# know makes it fail: keep the two in step.
#
# node:24-slim rather than -alpine: Debian's glibc is the libc envsync is developed and tested
# on, so npm installs the same per-platform packages in the image as on our machines, and Node's
# official builds target it first. Slim has no curl or wget, hence the HEALTHCHECK below.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# From the lockfile, production packages only. None needs an install script, and running none
# keeps package code out of the build.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The compiled JavaScript (dist/), built as the npm package builds it (scripts/build.ts). The
# image runs it rather than the TypeScript sources: no type stripping at run time, so less memory
# and a faster start. The dev dependencies the build needs stay in this stage.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.ts ./scripts/
COPY src ./src
RUN npm run build

FROM node:24-slim
ENV NODE_ENV=production \
    ENVSYNC_MANIFESTS=/manifests \
    ENVSYNC_STATE=/var/lib/envsync/state.json \
    ENVSYNC_LISTEN=0.0.0.0:9464
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The link puts `envsync` on PATH: the package's launcher, which runs dist/cli.js. Its shebang
# (`/usr/bin/env -S node ...`) execs node, so node itself is PID 1, with no shell in between to
# swallow SIGTERM. No tini: envsync handles SIGTERM and SIGINT itself (PID 1 gets no default
# signal handling, so that matters) and starts no child processes, so there are no zombies to
# reap.
RUN ln -s /app/bin/envsync.js /usr/local/bin/envsync \
 && mkdir -p /manifests /var/lib/envsync \
 && chown 1000:1000 /var/lib/envsync
# The image's `node` user, given by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9464
# Reads the port from ENVSYNC_LISTEN, so `-e ENVSYNC_LISTEN=0.0.0.0:8080` keeps it right.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ENVSYNC_LISTEN || ':9464').split(':').pop() + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["envsync"]
CMD ["run"]
