/** The emulator in this process with its admin calls over real HTTP, or as a child process. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { startEmulator } from '../../src/emulator/index.ts';
import type {
  EmulatorOptions,
  EmulatorStats,
  FaultSettings,
  FaultState,
  RequestLogEntry,
  RunningEmulator,
  StoreDocument,
} from '../../src/emulator/index.ts';

export type {
  EmulatorOptions,
  EmulatorStats,
  FaultSettings,
  FaultState,
  RequestLogEntry,
  StoreDocument,
};

import { watchChild } from './cli.ts';
import { CLI as CLI_PATH } from './entry.ts';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A response read whole: status, headers and the body parsed as JSON when it is JSON. */
export interface JsonResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  readonly body: unknown;
}

export interface SendOptions {
  readonly method?: Dispatcher.HttpMethod;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON (with Content-Type application/json unless headers say otherwise). */
  readonly json?: unknown;
  readonly body?: string | Buffer;
  readonly dispatcher?: Dispatcher;
  /** Client-side timeout for the response head, in milliseconds. */
  readonly headersTimeout?: number;
}

/** Sends one HTTP request with undici and reads the whole answer. */
export async function send(url: string, options: SendOptions = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await request(url, {
    method: options.method ?? 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    ...(options.headersTimeout === undefined ? {} : { headersTimeout: options.headersTimeout }),
  });
  const text = await response.body.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, body: parsed };
}

export interface TestEmulator extends RunningEmulator {
  /** The dispatcher the admin helpers use; tests may use it too (closed by `close`). */
  readonly agent: Agent;
  getStore(): Promise<StoreDocument>;
  /** Replaces the store; resolves with the store as the emulator now holds it. */
  putStore(store: unknown): Promise<StoreDocument>;
  getStats(): Promise<EmulatorStats>;
  getRequests(limit?: number): Promise<RequestLogEntry[]>;
  getFaults(): Promise<FaultState>;
  setFaults(partial: Partial<FaultSettings> & { seed?: number }): Promise<FaultState>;
  reset(): Promise<void>;
}

/** Changes an environment's description in the store, as a person at the service would. */
export async function editByHand(api: TestEmulator, org: string, name: string, text: string) {
  const store = await api.getStore();
  const env = store.orgs[org]?.find((e) => e.name === name);
  if (env === undefined) throw new Error(`${org}/${name} is not in the store`);
  env.description = text;
  await api.putStore(store);
}

/** Names of the policy documents of the fixtures' policies (fixtures.ts), for `policyDocuments`. */
export const FIXTURE_POLICIES = ['baseline', 'gdpr', 'legacy', 'pci', 'sox'] as const;

/** The store's `policies` for these names per org: one version each. */
export function policyDocumentsOf(
  documents: Readonly<Record<string, readonly string[]>>,
): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(documents).map(([org, names]) => [
      org,
      names.map((name) => ({ name, versions: [{ policy_yaml: `# ${name}\n` }] })),
    ]),
  );
}

export interface TestEmulatorOptions extends EmulatorOptions {
  /**
   * Policy documents that exist in this emulator's world, by org (the kosli profile attaches only
   * policies that have one): seeded at start, again after each `reset()`, and into each store
   * given to `putStore` without `policies` of its own.
   */
  readonly policyDocuments?: Readonly<Record<string, readonly string[]>> | undefined;
}

/** Starts an in-process emulator on 127.0.0.1 with a free port. */
export async function startTestEmulator(options: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const { policyDocuments, ...emulatorOptions } = options;
  const emulator = await startEmulator({ ...emulatorOptions, host: '127.0.0.1', port: 0 });
  const agent = new Agent();
  const admin = async <T>(path: string, init: SendOptions = {}): Promise<T> => {
    const response = await send(`${emulator.url}/_emulator/${path}`, {
      ...init,
      dispatcher: agent,
    });
    if (response.status !== 200)
      throw new Error(`${init.method ?? 'GET'} ${path}: HTTP ${response.status} ${response.text}`);
    return response.body as T;
  };
  const withDocuments = (store: unknown): unknown =>
    policyDocuments !== undefined && isRecord(store) && !Object.hasOwn(store, 'policies')
      ? { ...store, policies: policyDocumentsOf(policyDocuments) }
      : store;
  const putStore = (store: unknown) =>
    admin<StoreDocument>('store', { method: 'PUT', json: withDocuments(store) });
  if (policyDocuments !== undefined) await putStore({ orgs: {} });
  return {
    url: emulator.url,
    host: emulator.host,
    port: emulator.port,
    agent,
    getStore: () => admin('store'),
    putStore,
    getStats: () => admin('stats'),
    getRequests: async (limit) =>
      (
        await admin<{ requests: RequestLogEntry[] }>(
          limit === undefined ? 'requests' : `requests?limit=${limit}`,
        )
      ).requests,
    getFaults: () => admin('faults'),
    setFaults: (partial) => admin('faults', { method: 'PATCH', json: partial }),
    reset: async () => {
      await admin('reset', { method: 'POST' });
      if (policyDocuments !== undefined) await putStore({ orgs: {} });
    },
    close: async () => {
      // The emulator first: it drops hung requests, which the agent would otherwise wait for.
      try {
        await emulator.close();
      } finally {
        await agent.close();
      }
    },
  };
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SpawnedEmulator {
  readonly url: string;
  readonly child: ChildProcess;
  /** Sends `signal` (default SIGTERM) unless the child has exited; resolves when it has. */
  stop(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** Resolves when the child exits (without signalling it). */
  exited(): Promise<ExitInfo>;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  /** Everything the child wrote to stdout so far. */
  stdout(): string;
}

/**
 * Runs the CLI's `emulator --port 0 ...args` and resolves once its first stdout line, `listening
 * on http://...`, arrives. Rejects (and kills the child) if it exits, says something else, or stays
 * silent for `timeoutMs`.
 */
export async function spawnEmulator(
  args: readonly string[],
  {
    timeoutMs = 15_000,
    cwd,
    bin,
    env,
  }: {
    timeoutMs?: number;
    cwd?: string;
    /** An installed `envsync` to run instead of this checkout's CLI, with its environment. */
    bin?: string;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<SpawnedEmulator> {
  const command = ['emulator', '--port', '0', ...args];
  const child = spawn(
    bin ?? process.execPath,
    bin === undefined ? [CLI_PATH, ...command] : command,
    { stdio: ['ignore', 'pipe', 'pipe'], cwd, env },
  );
  const { stdout, stderr, exited } = watchChild(child);
  let exit: ExitInfo | undefined;
  void exited.then((info) => (exit = info));
  const deadline = Date.now() + timeoutMs;
  const fail = (why: string) => {
    child.kill('SIGKILL');
    return new Error(`emulator ${why}; stderr:\n${stderr()}`);
  };
  let lines = stdout().split('\n');
  while (lines.length < 2) {
    if (exit !== undefined)
      throw fail(`exited (code ${exit.code}, signal ${exit.signal}) before listening`);
    if (Date.now() > deadline) throw fail(`did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    lines = stdout().split('\n');
  }
  const url = /^listening on (http:\/\/\S+)$/.exec(lines[0] ?? '')?.[1];
  if (url === undefined) throw fail(`said first ${JSON.stringify(lines[0])}`);
  return {
    url,
    child,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited: () => exited,
    stderr,
    stdout,
  };
}
