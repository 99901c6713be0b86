/**
 * What the two baselines share: the bare minimum to read and parse every manifest (`yaml`, the
 * parser envsync uses) and a fixed number of undici workers over one keep-alive pool. No
 * validation, no retries, no plan: the floor any tool has to pay.
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { Pool } from 'undici';

export interface BaselineArgs {
  readonly manifests: string;
  readonly apiUrl: URL;
  readonly concurrency: number;
  readonly token: string;
  /** apply-floor.ts: PUT every n-th environment. */
  readonly every: number;
}

export function baselineArgs(): BaselineArgs {
  const { values } = parseArgs({
    options: {
      manifests: { type: 'string' },
      'api-url': { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      every: { type: 'string', default: '10' },
    },
  });
  if (values.manifests === undefined || values['api-url'] === undefined) {
    throw new Error('usage: --manifests DIR --api-url URL [--concurrency N]');
  }
  return {
    manifests: values.manifests,
    apiUrl: new URL(values['api-url']),
    concurrency: Number(values.concurrency),
    token: process.env['ENVSYNC_TOKEN'] ?? 'bench-token',
    every: Number(values.every),
  };
}

export interface Doc {
  org: string;
  environments: {
    name: string;
    type: string;
    description: string;
    policies?: string[];
  }[];
}

/**
 * Reads and parses every *.yaml / *.yml file below `root`. Synchronous reads: for small local
 * files they are the cheapest way (envsync reads the same way), so the floor stays a floor.
 */
export async function readAllManifests(root: string): Promise<Doc[]> {
  const files = (await readdir(root, { recursive: true }))
    .filter((file) => /\.ya?ml$/i.test(file))
    .map((file) => path.join(root, file));
  const docs: Doc[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const value = doc.toJS() as Doc | null;
      if (value) docs.push(value);
    }
  }
  return docs;
}

/** Runs `job(0..count-1)` on `n` workers. */
export async function workers(
  n: number,
  count: number,
  job: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, count) }, worker));
}

export function pool(args: BaselineArgs): Pool {
  return new Pool(args.apiUrl.origin, { connections: args.concurrency, pipelining: 1 });
}

export function orgPath(args: BaselineArgs, org: string): string {
  return `${args.apiUrl.pathname.replace(/\/+$/, '')}/api/v2/environments/${encodeURIComponent(org)}`;
}

/** The full PUT body for one declared environment, as envsync sends it. */
export function putBody(env: Doc['environments'][number]): string {
  return JSON.stringify({
    name: env.name,
    description: env.description,
    type: env.type,
    policies: env.policies ?? [],
  });
}
