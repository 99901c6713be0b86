import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  BASE_IMAGE,
  IMAGE,
  WORK,
  buildImage,
  checkMachine,
  ensureBaseImage,
  podman,
  podmanResult,
  writeConfig,
} from './podman.ts';

/**
 * `npm run test:image`: the repository's Dockerfile built with podman and the image run for
 * real: `--version`, then the daemon with the examples mounted, against the emulator it embeds
 * (`--emulator`, real HTTP inside the container), up to `podman stop`. The recipe and its
 * workarounds are in ./podman.ts; docs/container.md explains them. Every container started here
 * is removed at the end, also when a step fails.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `script` with the image's node (not its entry point); returns the JSON it printed. */
async function nodeInImage(script: string): Promise<unknown> {
  const run = await podman(['run', '--rm', '--entrypoint', 'node', IMAGE, '-e', script]);
  return JSON.parse(run.stdout) as unknown;
}
const PREFIX = 'envsync-test-image-';
const RUN_ID = `${process.pid}-${randomBytes(3).toString('hex')}`;
const started: string[] = [];

/**
 * Removes the containers a run that was killed left behind: those whose name carries the pid of a
 * process that is gone. A run still going keeps its own.
 */
async function removeLeftovers(): Promise<void> {
  const names = (
    await podman(['ps', '--all', '--filter', `name=^${PREFIX}`, '--format', '{{.Names}}'])
  ).stdout
    .split('\n')
    .filter((n) => n !== '');
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code !== 'ESRCH';
    }
  };
  const gone = names.filter((n) => !alive(Number(n.slice(PREFIX.length).split('-')[0])));
  if (gone.length > 0) await podman(['rm', '--force', '--time', '2', ...gone], 120_000);
}

/** Starts a container in the background, remembered for removal. */
async function start(name: string, args: readonly string[]): Promise<string> {
  started.push(name);
  // The HEALTHCHECK is run by hand below: no systemd timer for it.
  await podman(['run', '--detach', '--name', name, '--health-interval=disable', ...args], 120_000);
  return name;
}

beforeAll(async () => {
  // Progress for the log (no test looks at these times).
  let since = Date.now();
  const done = (what: string) => {
    console.log(`image: ${what} (${Math.round((Date.now() - since) / 1000)} s)`);
    since = Date.now();
  };
  await checkMachine();
  await writeConfig();
  await removeLeftovers();
  const base = await ensureBaseImage();
  done(`base image ${BASE_IMAGE} ${base} (work folder ${WORK})`);
  await buildImage(REPO);
  done(`built ${IMAGE} from ${path.join(REPO, 'Dockerfile')}`);
  // The first build on a fresh machine bootstraps Debian and downloads Node: minutes.
}, 45 * 60_000);

afterAll(async () => {
  const failures: string[] = [];
  for (const name of started) {
    const removed = await podmanResult(['rm', '--force', '--time', '2', '--ignore', name], 60_000);
    if (removed.code !== 0) failures.push(`${name}: ${removed.stderr.trim()}`);
  }
  if (failures.length > 0) throw new Error(`image: could not remove ${failures.join('; ')}`);
}, 5 * 60_000);

describe('the image built from the Dockerfile', () => {
  it('keeps its HEALTHCHECK (docker format), runs as 1000:1000, and holds none of the build-time mounts', async () => {
    const [inspected] = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout) as [
      {
        Config: { User?: string; Entrypoint?: string[]; Cmd?: string[] };
        Healthcheck?: { Test?: string[] };
      },
    ];
    expect(inspected.Config.User).toBe('1000:1000');
    expect(inspected.Config.Entrypoint).toEqual(['envsync']);
    expect(inspected.Config.Cmd).toEqual(['run']);
    expect(inspected.Healthcheck?.Test?.join(' ')).toContain('/healthz');

    // The CA bundle and npmrc were mounted for the deps stage only: no empty mount point of
    // theirs is left in the final image.
    const leftovers = await nodeInImage(
      `const fs = require('node:fs');
       const paths = ['/etc/ssl/certs/ca-certificates.crt', '/usr/local/etc/npmrc'];
       console.log(JSON.stringify(paths.filter((p) => fs.existsSync(p))));`,
    );
    expect(leftovers).toEqual([]);
  });

  it('runs the compiled JavaScript, with production dependencies only', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const inImage = (await nodeInImage(
      `const fs = require('node:fs');
       console.log(JSON.stringify({
         app: fs.readdirSync('/app').sort(),
         modules: fs.readdirSync('/app/node_modules'),
         cli: fs.existsSync('/app/dist/cli.js'),
       }));`,
    )) as { app: string[]; modules: string[]; cli: boolean };
    expect(inImage.app).toEqual(['bin', 'dist', 'node_modules', 'package.json']);
    expect(inImage.cli).toBe(true);
    for (const name of Object.keys(pkg.dependencies)) expect(inImage.modules).toContain(name);
    for (const name of Object.keys(pkg.devDependencies)) {
      expect(inImage.modules).not.toContain(name.split('/')[0]);
    }
  });

  it('`envsync --version` prints the package version', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await podman(['run', '--rm', IMAGE, '--version']);
    expect(result.stdout.trim()).toBe(pkg.version);
  });
});

describe('the daemon in the image, with the examples mounted', () => {
  const name = `${PREFIX}${RUN_ID}`;
  let base = '';
  let logs = async () => '';

  beforeAll(async () => {
    await start(name, [
      // A free port of the host's loopback, to the image's listen port.
      '--publish',
      '127.0.0.1::9464',
      '--volume',
      `${path.join(REPO, 'examples', 'manifests')}:/manifests:ro`,
      IMAGE,
      'run',
      '--emulator',
      '--emulator-profile=kosli',
    ]);
    logs = async () => {
      const result = await podmanResult(['logs', name]);
      return `${result.stdout}${result.stderr}`;
    };
    const port = (await podman(['port', name, '9464/tcp'])).stdout.trim().split('\n')[0] ?? '';
    base = `http://${port}`;
  }, 5 * 60_000);

  const get = (pathname: string) =>
    fetch(`${base}${pathname}`, { signal: AbortSignal.timeout(5_000) });

  it('answers /healthz, and its first pass reconciles every example org against the API', async () => {
    const health = await waitFor(
      '/healthz to answer',
      () => get('/healthz').then((r) => (r.ok ? r : undefined)),
      { timeoutMs: 60_000, everyMs: 250 },
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\ncontainer log:\n${await logs()}`);
    });
    expect(await health.json()).toMatchObject({ status: 'ok', health: { level: 'healthy' } });

    type Status = {
      lastPass: { result: string } | null;
      orgs: Record<string, { status: string; pending: number }>;
    };
    const status = await waitFor(
      'a finished pass in /status',
      async () => {
        const body = (await (await get('/status')).json()) as Status;
        return body.lastPass === null ? undefined : body;
      },
      { timeoutMs: 60_000, everyMs: 250 },
    );
    expect(status.lastPass?.result, await logs()).toBe('success');
    expect(Object.keys(status.orgs).sort()).toEqual(['acme', 'globex', 'initech']);
    for (const org of Object.values(status.orgs)) {
      expect(org).toMatchObject({ status: 'ok', pending: 0 });
    }
  });

  it('runs as uid 1000, with node itself as PID 1', async () => {
    const proc = await podman([
      'exec',
      name,
      'sh',
      '-c',
      "grep '^Uid:' /proc/1/status; tr '\\0' ' ' < /proc/1/cmdline",
    ]);
    const [uidLine = '', cmdline = ''] = proc.stdout.split('\n');
    // Real, effective, saved and filesystem uid.
    expect(uidLine.split(/\s+/).slice(1)).toEqual(['1000', '1000', '1000', '1000']);
    expect(cmdline).toMatch(/^node .*\/usr\/local\/bin\/envsync run --emulator/);
  });

  it('passes `podman healthcheck run`', async () => {
    const result = await podmanResult(['healthcheck', 'run', name]);
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
  });

  it('stops on `podman stop` (SIGTERM) with exit code 0, its state written', async () => {
    // Within 10 s of SIGTERM, or podman SIGKILLs it and the exit code is 137.
    await podman(['stop', '--time', '10', name], 120_000);
    const state = (
      await podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', name])
    ).stdout.trim();
    expect(state, await logs()).toBe('exited 0');
    const log = await logs();
    expect(log).toContain('"msg":"SIGTERM: stopping');
    expect(log).toContain('"msg":"stopped"');

    const tmp = await tempDir('envsync-image-state-');
    try {
      await podman(['cp', `${name}:/var/lib/envsync/state.json`, tmp.path('state.json')]);
      const written = JSON.parse(await readFile(tmp.path('state.json'), 'utf8')) as {
        orgs: Record<string, unknown>;
      };
      expect(Object.keys(written.orgs).sort()).toEqual(['acme', 'globex', 'initech']);
    } finally {
      await tmp.cleanup();
    }
  });
});
