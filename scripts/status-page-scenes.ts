/**
 * The status page's states, each set up for real: an emulator, manifests in a temporary folder
 * and `envsync run` as a child process, until its first pass has ended. Used by
 * `npm run docs:screenshots` (scripts/docs-screenshots.ts) and by the browser test
 * (test/system/browser.test.ts), so that the screenshots in docs/ show what the test checks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { HealthLevel, OrgState, SyncState } from '../src/daemon/status.ts';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.ts';

// Random-looking: envsync masks any 12 characters of the token in a row in what it shows, and a
// token made of words would blank those words out of the page.
export const SCENE_TOKEN = 'Sc7b1d4e90Qx2Lm9';

export interface Scene {
  /** The screenshot's name: docs/status-page-NAME.png. */
  readonly name: string;
  /** What it shows, in a few words (the docs' caption). */
  readonly title: string;
  /** Files of the folder `envsync run` runs in, by relative path. */
  readonly files: Readonly<Record<string, string>>;
  /** `envsync run`'s flags beside the ones every scene has. */
  readonly flags: readonly string[];
  /** The orgs the token may touch; null for every org. */
  readonly tokenOrgs: readonly string[] | null;
  /** Before the daemon starts: a `sync` of the files, then the service edited by hand. */
  readonly afterSync?: {
    readonly files?: Readonly<Record<string, string>>;
    readonly descriptions?: readonly { org: string; name: string; description: string }[];
  };
  /** What the page must say: the header's health and sync, and each org's state. */
  readonly expected: {
    readonly level: HealthLevel;
    readonly sync: SyncState;
    readonly mode: 'normal' | 'observe';
    readonly states: Readonly<Record<string, OrgState>>;
  };
}

const env = (name: string, type: string, description: string) =>
  `  - name: ${name}\n    type: ${type}\n    description: ${JSON.stringify(description)}\n`;

const ACME =
  'org: acme\nenvironments:\n' +
  env('production', 'K8S', 'Production cluster (eu-west-1)') +
  env('staging', 'K8S', 'Staging, deployed on every merge') +
  env('assets', 'S3', 'Static assets bucket');
const GLOBEX =
  'org: globex\nenvironments:\n' +
  env('web', 'K8S', 'Web tier') +
  env('data-lake', 'S3', 'Raw event archive');
const INITECH = 'org: initech\nenvironments:\n' + env('printer', 'K8S', 'Printer fleet');
const BASE = {
  'manifests/acme.yaml': ACME,
  'manifests/globex.yaml': GLOBEX,
  'manifests/initech.yaml': INITECH,
};

/** A day two days from now (UTC): an allow window on it is closed today and tomorrow. */
function dayAfterTomorrow(now: number): string {
  const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
  return days[(new Date(now).getUTCDay() + 2) % 7] ?? 'sun';
}

export function scenes(now: number): Scene[] {
  return [
    {
      name: 'synced',
      title: 'Healthy and synced: every org holds what its manifests declare',
      files: BASE,
      flags: [],
      tokenOrgs: null,
      expected: {
        level: 'healthy',
        sync: 'synced',
        mode: 'normal',
        states: { acme: 'synced', globex: 'synced', initech: 'synced' },
      },
    },
    {
      name: 'invalid',
      title: 'Degraded and out of sync: an invalid manifest, and a change not sent (observe mode)',
      files: BASE,
      flags: ['--observe'],
      tokenOrgs: null,
      afterSync: {
        files: {
          'manifests/globex.yaml': GLOBEX.replace('type: K8S', 'type: k8s'),
          'manifests/initech.yaml': INITECH + env('fax', 'S3', 'Fax archive'),
        },
      },
      expected: {
        level: 'degraded',
        sync: 'out-of-sync',
        mode: 'observe',
        states: { acme: 'synced', globex: 'invalid', initech: 'pending' },
      },
    },
    {
      name: 'failing',
      title: 'Failing: the token may touch no org, so their sync is unknown',
      files: BASE,
      flags: [],
      tokenOrgs: ['someone-else'],
      expected: {
        level: 'failing',
        sync: 'unknown',
        mode: 'normal',
        states: { acme: 'failed', globex: 'failed', initech: 'failed' },
      },
    },
    {
      name: 'suspended',
      title: 'One org suspended (suspend: true)',
      files: { ...BASE, 'manifests/globex.yaml': `suspend: true\n${GLOBEX}` },
      flags: [],
      tokenOrgs: null,
      expected: {
        level: 'healthy',
        sync: 'suspended',
        mode: 'normal',
        states: { acme: 'synced', globex: 'suspended', initech: 'synced' },
      },
    },
    {
      name: 'observe',
      title: 'Healthy and drifted: a hand edit and a new environment, nothing sent (observe mode)',
      files: BASE,
      flags: ['--observe'],
      tokenOrgs: null,
      afterSync: {
        files: { 'manifests/initech.yaml': INITECH + env('fax', 'S3', 'Fax archive') },
        descriptions: [{ org: 'acme', name: 'production', description: 'changed by hand' }],
      },
      expected: {
        level: 'healthy',
        sync: 'drifted',
        mode: 'observe',
        states: { acme: 'drifted', globex: 'synced', initech: 'pending' },
      },
    },
    {
      name: 'window',
      title: 'Outside the sync windows: changes wait',
      files: BASE,
      flags: ['--sync-window', `allow ${dayAfterTomorrow(now)} 03:00 1h UTC`],
      tokenOrgs: null,
      expected: {
        level: 'healthy',
        sync: 'waiting',
        mode: 'normal',
        states: {
          acme: 'waiting for window',
          globex: 'waiting for window',
          initech: 'waiting for window',
        },
      },
    },
  ];
}

export interface RunningScene {
  /** The daemon's endpoints, e.g. http://127.0.0.1:41234. */
  readonly url: string;
  readonly run: ChildProcess;
  /** What the daemon wrote to stderr so far (its log). */
  stderr(): string;
  stop(): Promise<void>;
}

async function writeFiles(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(dir, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it gives a value, or throws after `ms` saying what it waited for; an error
 * `check` throws ends the wait at once.
 */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function spawnCli(cli: string, args: readonly string[], cwd: string) {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      ENVSYNC_TOKEN: SCENE_TOKEN,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, stderr: () => stderr, exited };
}

/** The `sync` and the hand edits of `afterSync`. */
async function prepare(scene: Scene, cli: string, dir: string, api: RunningEmulator) {
  if (scene.afterSync === undefined) return;
  const sync = spawnCli(
    cli,
    ['sync', '--manifests', 'manifests', '--api-url', api.url, '--state', 'state.json'],
    dir,
  );
  if ((await sync.exited) !== 0) throw new Error(`envsync sync failed:\n${sync.stderr()}`);
  await writeFiles(dir, scene.afterSync.files ?? {});
  const storeUrl = `${api.url}/_emulator/store`;
  const store = (await (await fetch(storeUrl)).json()) as {
    orgs: Record<string, { name: string; description?: string }[]>;
  };
  for (const edit of scene.afterSync.descriptions ?? []) {
    const found = store.orgs[edit.org]?.find((e) => e.name === edit.name);
    if (found === undefined) throw new Error(`${edit.org}/${edit.name} is not in the store`);
    found.description = edit.description;
  }
  const put = await fetch(storeUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(store),
  });
  if (!put.ok) throw new Error(`PUT ${storeUrl}: ${put.status}`);
}

/**
 * Starts the scene: its emulator (with `legacy-ci`, an environment no manifest declares, in
 * acme), its files and `envsync run` (the CLI at `cli`); resolves once the first pass has ended.
 */
export async function startScene(scene: Scene, cli: string): Promise<RunningScene> {
  const dir = await mkdtemp(path.join(tmpdir(), `envsync-scene-${scene.name}-`));
  const api = await startEmulator({
    host: '127.0.0.1',
    port: 0,
    tokens: [{ token: SCENE_TOKEN, orgs: scene.tokenOrgs }],
  });
  let run: ReturnType<typeof spawnCli> | undefined;
  const stop = async () => {
    if (run !== undefined && run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
    await api.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const seeded = await fetch(`${api.url}/_emulator/store`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        orgs: { acme: [{ name: 'legacy-ci', type: 'K8S', description: 'Old CI runners' }] },
      }),
    });
    if (!seeded.ok) throw new Error(`seeding the emulator: ${seeded.status}`);
    await writeFiles(dir, scene.files);
    await prepare(scene, cli, dir, api);
    const started = spawnCli(
      cli,
      [
        'run',
        '--manifests',
        'manifests',
        '--api-url',
        api.url,
        '--state',
        'state.json',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '0',
        '--retries',
        '0',
        ...scene.flags,
      ],
      dir,
    );
    run = started;
    const url = await until('the daemon to listen', 60_000, () => {
      const line = started
        .stderr()
        .split('\n')
        .find((l) => l.startsWith('{') && l.includes('"listen"'));
      const listen =
        line === undefined ? undefined : (JSON.parse(line) as { listen?: unknown }).listen;
      if (typeof listen === 'string') return Promise.resolve(listen);
      if (started.child.exitCode !== null)
        throw new Error(`envsync run exited:\n${started.stderr()}`);
      return Promise.resolve(undefined);
    });
    await until('the first pass', 60_000, async () => {
      if (started.child.exitCode !== null)
        throw new Error(`envsync run exited:\n${started.stderr()}`);
      const response = await fetch(`${url}/status`);
      const status = (await response.json()) as { lastPass: unknown; passRunning: boolean };
      return status.lastPass !== null && !status.passRunning ? true : undefined;
    });
    return { url, run: started.child, stderr: started.stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
