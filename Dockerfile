# envsync's container image: `docker build -t envsync .`
#
# No container engine runs on our machines, so test/examples/dockerfile.test.ts carries these
# steps out itself: the deps stage's RUN verbatim, the final stage's COPY and RUN steps on a
# scratch tree, then the ENTRYPOINT, CMD, ENV and HEALTHCHECK as written here. A step that test
# does not know makes it fail: keep the two in step.
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

FROM node:24-slim
ENV NODE_ENV=production \
    ENVSYNC_MANIFESTS=/manifests \
    ENVSYNC_STATE=/var/lib/envsync/state.json \
    ENVSYNC_LISTEN=0.0.0.0:9464
# Outside node_modules: Node refuses to strip types from files under it.
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# The link puts `envsync` on PATH. Its shebang (`/usr/bin/env node`) execs node, so node itself
# is PID 1, with no shell in between to swallow SIGTERM. No tini: envsync handles SIGTERM and
# SIGINT itself (PID 1 gets no default signal handling, so that matters) and starts no child
# processes, so there are no zombies to reap.
RUN ln -s /app/src/cli.ts /usr/local/bin/envsync \
 && chmod 0755 /app/src/cli.ts \
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
