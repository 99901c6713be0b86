/**
 * The emulator as a separate process on loopback (`envsync emulator --port 0`), and the admin
 * calls the benchmark needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import { envsyncCommand } from './proc.ts';

export interface Stats {
  total: number;
  byMethod: Record<string, number>;
  byStatus: Record<string, number>;
}

export interface LoggedRequest {
  time: string;
  method: string;
  path: string;
  status: number | null;
}

export interface BenchEmulator {
  readonly url: string;
  readonly pid: number;
  stats(): Promise<Stats>;
  putStore(document: unknown): Promise<void>;
  setLatency(ms: number): Promise<void>;
  /** PATCH /_emulator/faults: any of its fields (rateLimit, failRate, ...). */
  setFaults(patch: Record<string, unknown>): Promise<void>;
  /** GET /_emulator/store: the whole store document. */
  store(): Promise<unknown>;
  requests(limit: number): Promise<LoggedRequest[]>;
  stop(): Promise<void>;
}

/** Counts between two stats snapshots. */
export function statsDelta(
  before: Stats,
  after: Stats,
): { total: number; get: number; put: number; non2xx: number } {
  const sum = (s: Stats) =>
    Object.entries(s.byStatus).reduce((n, [code, c]) => n + (code.startsWith('2') ? 0 : c), 0);
  return {
    total: after.total - before.total,
    get: (after.byMethod['GET'] ?? 0) - (before.byMethod['GET'] ?? 0),
    put: (after.byMethod['PUT'] ?? 0) - (before.byMethod['PUT'] ?? 0),
    non2xx: sum(after) - sum(before),
  };
}

export async function startBenchEmulator(args: readonly string[] = []): Promise<BenchEmulator> {
  const [program, ...rest] = envsyncCommand([
    'emulator',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--log-level',
    'warn',
    ...args,
  ]);
  const child: ChildProcess = spawn(program as string, rest, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`emulator did not start; stderr:\n${stderr}`));
    }, 20_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /^listening on (http:\/\/\S+)\n/.exec(out);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`emulator exited before listening; stderr:\n${stderr}`));
    });
  });
  const agent = new Agent({ connections: 4 });
  const admin = async (method: 'GET' | 'PUT' | 'PATCH', path: string, body?: unknown) => {
    const response = await request(`${url}/_emulator/${path}`, {
      method,
      dispatcher: agent,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) {
      throw new Error(`${method} /_emulator/${path}: ${response.statusCode} ${text.slice(0, 300)}`);
    }
    return text;
  };
  return {
    url,
    pid: child.pid as number,
    stats: async () => JSON.parse(await admin('GET', 'stats')) as Stats,
    putStore: async (document) => {
      await admin('PUT', 'store', document);
    },
    setLatency: async (ms) => {
      await admin('PATCH', 'faults', { latencyMs: ms });
    },
    setFaults: async (patch) => {
      await admin('PATCH', 'faults', patch);
    },
    store: async () => JSON.parse(await admin('GET', 'store')) as unknown,
    requests: async (limit) =>
      (JSON.parse(await admin('GET', `requests?limit=${limit}`)) as { requests: LoggedRequest[] })
        .requests,
    stop: async () => {
      await agent.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
