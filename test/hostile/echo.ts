/**
 * A service that echoes the token back encoded, and the search for it in what envsync wrote.
 * Every encoding is made here with Node's own encoders, never with envsync's code, so the search
 * does not share a blind spot with the masking it checks.
 */
import { expect } from 'vitest';
import { startFakeApi } from '../helpers/fake-api.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/**
 * HTML's named references for the token's punctuation: envsync does not read them (what stands
 * between two of them is masked where it is a run of 12 or more of the token).
 */
const NAMED: Readonly<Record<string, string>> = {
  '+': '&plus;',
  '/': '&sol;',
  '.': '&period;',
  _: '&lowbar;',
  '-': '&hyphen;',
  '~': '&tilde;',
  '=': '&equals;',
};

/** The token as a careless service or proxy echoes it back, each way by name. */
export function encodedEchoes(token: string): Record<string, string> {
  const bearer = `Bearer ${token}`;
  return {
    // Seven bytes before the token: it starts one byte into a base64 group.
    'base64 of the Authorization header': b64(bearer),
    // Eight bytes before it: two bytes in.
    'base64 of Basic credentials': b64(`envsync:${token}`),
    'base64 of the bare token': b64(token),
    'unpadded base64url of the header': Buffer.from(bearer).toString('base64url'),
    'hex of the token': Buffer.from(token).toString('hex'),
    'upper-case hex of the token': Buffer.from(token).toString('hex').toUpperCase(),
    'named HTML references': Array.from(bearer, (c) => NAMED[c] ?? c).join(''),
    'form-encoded query': new URLSearchParams({ access_token: token }).toString(),
    'base64 in a JSON string with escaped slashes': JSON.stringify(b64(`x:${token}`))
      .slice(1, -1)
      .replace(/\//g, '\\/'),
    'percent-encoded base64': encodeURIComponent(b64(bearer)),
  };
}

/** Every echo in one text, as a message or a description would carry them. */
export function allEchoes(token: string): string {
  return Object.entries(encodedEchoes(token))
    .map(([name, echo]) => `${name}: ${echo}`)
    .join('; ');
}

/** The windows of `length` characters of `text`. */
function windows(text: string, length: number): string[] {
  return Array.from({ length: Math.max(0, text.length - length + 1) }, (_, i) =>
    text.slice(i, i + length),
  );
}

/**
 * What to look for, by name: 12 characters in a row of the token as it is, JSON-escaped or
 * percent-encoded, of its base64 or base64url at each alignment (only the characters made of
 * the token's bits alone) and of its hex of either case (docs/security.md: what is masked).
 */
function needles(token: string): [string, string[]][] {
  const bytes = Buffer.from(token);
  const spans: [string, string[]][] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const stable = encoded.slice(
      Math.ceil((offset * 8) / 6),
      Math.floor(((offset + bytes.length) * 8) / 6),
    );
    const url = stable.replace(/\+/g, '-').replace(/\//g, '_');
    spans.push([`base64 at offset ${offset}`, [...windows(stable, 12), ...windows(url, 12)]]);
  }
  const hex = bytes.toString('hex');
  return [
    ['the token', windows(token, 12)],
    ['the token JSON-escaped', windows(JSON.stringify(token).slice(1, -1), 12)],
    ['the token percent-encoded', windows(encodeURIComponent(token), 12)],
    ...spans,
    ['hex', [...windows(hex, 12), ...windows(hex.toUpperCase(), 12)]],
  ];
}

/**
 * Which spellings of the token `text` still holds, by name only (never the text itself: a
 * failing test must not print the token).
 */
export function spellingsIn(text: string, token: string): string[] {
  return needles(token)
    .filter(([, parts]) => parts.some((part) => text.includes(part)))
    .map(([name]) => name);
}

/**
 * The fake service: each org answers its own way, every answer carrying every echo (of each of
 * `tokens`: with a token per org, every org's answer echoes every org's token). acme lists `web`
 * as declared and `old`, which no manifest declares, with the echoes in its description and in a
 * tag, and refuses every change (400, JSON, the echoes in its message and in a header); beta
 * answers an HTML error page (500); gamma refuses the token (403); delta's listing is not JSON
 * and its Content-Type carries the echoes. The policy documents carry them too.
 */
export function startEchoingService(tokens: string | readonly string[]) {
  const all = typeof tokens === 'string' ? [tokens] : tokens;
  const echoes = all.map(allEchoes).join('; ');
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    status,
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  const answers: Record<string, (method: string) => ReturnType<typeof json>> = {
    acme: (method) =>
      method === 'GET'
        ? json(200, [
            { name: 'web', type: 'K8S', description: 'w' },
            { name: 'old', type: 'K8S', description: echoes, tags: { echo: echoes } },
          ])
        : json(
            400,
            { message: `rejected: ${echoes}`, errors: { authorization: echoes } },
            { 'x-echo': echoes },
          ),
    beta: () => ({
      status: 500,
      body: `<html><body><h1>Internal error</h1><p>${all.flatMap((token) => Object.values(encodedEchoes(token))).join('<br>')}</p></body></html>`,
      headers: { 'content-type': 'text/html' },
    }),
    gamma: () => json(403, { message: `forbidden: ${echoes}` }),
    delta: () => ({
      status: 200,
      body: `<html>${echoes}</html>`,
      headers: {
        'content-type': `text/html; ${all.map((token, i) => `echo${i}="${b64(`Bearer ${token}`)}"`).join('; ')}`,
      },
    }),
  };
  const documents = json(200, [
    {
      name: 'echo',
      description: echoes,
      versions: [{ version: 1, policy_yaml: `note: ${JSON.stringify(echoes)}\n` }],
    },
  ]);
  return startFakeApi((req, res) => {
    if (req.url?.startsWith('/api/v2/policies/') === true) {
      res.writeHead(documents.status, documents.headers).end(documents.body);
      return;
    }
    const org = /\/api\/v2\/environments\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
    const answer = answers[org]?.(req.method ?? 'GET') ?? json(404, { message: 'no such org' });
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
}

/** Manifests for the service's orgs: acme has a change to send (refused) and one to create. */
export const ECHO_MANIFESTS: Readonly<Record<string, string>> = Object.fromEntries(
  ['acme', 'beta', 'gamma', 'delta'].map((org) => [
    `${org}.yaml`,
    `org: ${org}\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n  - name: api\n    type: K8S\n    description: d\n`,
  ]),
);

/** A one-shot command run by name, its outputs kept for the search (each test's `run`). */
export type NamedRun = (
  name: string,
  args: string[],
) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/**
 * The plan and sync sinks every echo test searches: a plan in each format, a plan saved with a
 * summary file, and a sync with one. Both end in 1 (the echoing service fails some orgs).
 */
export async function planAndSyncSinks(
  run: NamedRun,
  common: readonly string[],
  fast: readonly string[],
): Promise<void> {
  for (const format of ['text', 'json', 'markdown'])
    await run(`plan -o ${format}`, ['plan', ...common, ...fast, '-o', format]);
  const planned = await run('plan --out', [
    'plan',
    ...common,
    ...fast,
    '--out',
    'plan.json',
    '--summary-file',
    'plan-summary.md',
  ]);
  expect(planned.code).toBe(1);
  const synced = await run('sync', [
    'sync',
    ...common,
    ...fast,
    '--summary-file',
    'sync-summary.md',
  ]);
  expect(synced.code).toBe(1);
}
