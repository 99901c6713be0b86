import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import pino from 'pino';
import { resolveDaemonSettings, type DAEMON_SETTINGS } from '../../src/config/daemon-settings.ts';
import type { FlagsOf } from '../../src/config/setting.ts';
import { resolveSettings, type SETTINGS } from '../../src/config/settings.ts';
import type { Clock } from '../../src/core/clock.ts';
import { Masker } from '../../src/core/mask.ts';
import { Daemon, type NotifyDeps } from '../../src/daemon/daemon.ts';
import { startDaemonServer } from '../../src/daemon/http.ts';
import { maskingStream } from '../../src/runtime/log.ts';
import { defaultSource, oneToken, readTokens } from '../../src/config/tokens.ts';
import type { EmulatorOptions } from '../../src/emulator/options.ts';
import { afterEach, beforeEach } from 'vitest';
import { FIXTURE_POLICIES, startTestEmulator, type TestEmulator } from './emulator.ts';
import { tempDir } from './tmp.ts';
import { waitFor } from './wait.ts';

type TempDir = Awaited<ReturnType<typeof tempDir>>;

/** A daemon in this process against a real API over loopback, with its endpoints on a free port. */
export async function startTestDaemon(options: {
  apiUrl: string;
  cwd: string;
  token?: string;
  tokenFile?: string;
  /** `--token-dir`: each org's token from its file there, `token` (or `tokenFile`) the default. */
  tokenDir?: string;
  flags?: FlagsOf<typeof SETTINGS & typeof DAEMON_SETTINGS>;
  /** Where the endpoints listen (default 127.0.0.1, a free port). */
  listenHost?: string;
  webhookSecret?: string;
  /** More secrets every sink masks, as `run` masks those it reads at start. */
  secrets?: readonly string[];
  /** The notifications' sender and limits. */
  notify?: NotifyDeps;
  /** The daemon's clock (the real one by default). */
  clock?: Clock;
}) {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  // As `envsync run` does: the logs, like every sink, mask the secrets the daemon learns (its
  // tokens, the webhook secret).
  const secrets = new Masker();
  for (const secret of [...(options.secrets ?? []), options.webhookSecret ?? ''])
    if (secret !== '') secrets.add(secret);
  const logger = pino({ level: 'debug' }, maskingStream(sink, secrets.mask));
  const flags = {
    'retry-delay': '10ms',
    interval: '0',
    debounce: '100ms',
    settle: '300ms',
    ...options.flags,
  };
  const settings = await resolveSettings(flags, {}, options.cwd);
  const daemonSettings = resolveDaemonSettings(flags, {}, settings.file);
  const daemon = new Daemon({
    settings,
    daemon: daemonSettings,
    apiUrl: new URL(options.apiUrl),
    readTokens: async () => {
      const { tokenDir, tokenFile, token } = options;
      if (tokenDir !== undefined) {
        const env = token === undefined ? {} : { ENVSYNC_TOKEN: token };
        return readTokens({ tokenDir, tokenFile }, env, options.cwd);
      }
      const read =
        tokenFile === undefined ? (token ?? '') : (await readFile(tokenFile, 'utf8')).trim();
      return oneToken(read, defaultSource(tokenFile));
    },
    cwd: options.cwd,
    logger,
    secrets,
    ...(options.notify === undefined ? {} : { notify: options.notify }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const server = await startDaemonServer(
    daemon,
    { host: options.listenHost ?? '127.0.0.1', port: 0 },
    logger,
    { webhookSecret: options.webhookSecret },
  );
  await daemon.start();
  return {
    daemon,
    url: server.url,
    port: Number(new URL(server.url).port),
    logs: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    passes: () => daemon.status().passes,
    async stop() {
      await server.close();
      await daemon.stop();
    },
  };
}

/** A manifest of `org`, an environment of type K8S per entry of `envs` (name: description). */
export const manifestOf = (org: string, envs: Record<string, string>, extra = '') =>
  `org: ${org}\nenvironments:\n${Object.entries(envs)
    .map(
      ([name, text]) =>
        `  - name: ${name}\n    type: K8S\n    description: ${JSON.stringify(text)}\n${extra}`,
    )
    .join('')}`;

type TestDaemon = Awaited<ReturnType<typeof startTestDaemon>>;

/** Starts a pass and waits until it (and any pass queued behind it) is over. */
export async function passNow(d: TestDaemon): Promise<void> {
  const before = d.passes();
  d.daemon.trigger('test');
  await waitFor('the pass', () => d.passes() > before, { timeoutMs: 60_000 });
  await d.daemon.idle();
}

/** The policy documents of the fixtures' policies, in acme and beta (attaching needs one). */
const DOCUMENTS = { acme: FIXTURE_POLICIES, beta: FIXTURE_POLICIES };

/**
 * The world of an in-process daemon test, fresh for each test: a temporary folder and the
 * emulator (kosli profile) serving `tokens`, with the fixtures' policy documents; `cleanups` run
 * after the test, last first, before the emulator and the folder go.
 */
export function useDaemonWorld(tokens: NonNullable<EmulatorOptions['tokens']>) {
  let tmp: TempDir | undefined;
  let api: TestEmulator | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  const emulator = (served: typeof tokens) =>
    startTestEmulator({ profile: 'kosli', tokens: served, policyDocuments: DOCUMENTS });
  beforeEach(async () => {
    tmp = await tempDir();
    api = await emulator(tokens);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
    await api?.close();
    await tmp?.cleanup();
    api = undefined;
    tmp = undefined;
  });
  const present = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} exists only while a test runs`);
    return value;
  };
  return {
    get tmp(): TempDir {
      return present(tmp, 'the temporary folder');
    },
    get api(): TestEmulator {
      return present(api, 'the emulator');
    },
    cleanups,
    /**
     * A daemon against this test's emulator in its folder (`manifests/`, `state.json`, the first
     * token unless another is given), stopped after the test.
     */
    async start(options: Partial<Parameters<typeof startTestDaemon>[0]> = {}): Promise<TestDaemon> {
      const started = await startTestDaemon({
        apiUrl: present(api, 'the emulator').url,
        cwd: present(tmp, 'the temporary folder').dir,
        ...(tokens[0] === undefined ? {} : { token: tokens[0].token }),
        ...options,
        flags: { manifests: 'manifests', state: 'state.json', ...options.flags },
      });
      cleanups.push(() => started.stop());
      return started;
    },
    /** An environment's description in the emulator's store. */
    async description(org: string, name: string): Promise<string | undefined> {
      const store = await present(api, 'the emulator').getStore();
      return store.orgs[org]?.find((env) => env.name === name)?.description;
    },
    /** Stops this test's emulator and starts another, serving `others` instead. */
    async restartEmulator(others: NonNullable<EmulatorOptions['tokens']>): Promise<TestEmulator> {
      await api?.close();
      api = await emulator(others);
      return api;
    },
  };
}
