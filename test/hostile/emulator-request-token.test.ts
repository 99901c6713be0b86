/**
 * A client that sends its token in the request target (a query string, a path): the emulator's
 * request log, its log at debug and its 404s hold none of it.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';

const KNOWN = 'Qk7+LmN2/pR8sT4hJ6xWz==';
const OTHER = 'zP3vX9qL2mK8rT5w';
const SENT = 'c1D4e7F0g3H6i9J2k5L8';

/** An emulator at debug level (kosli: every route), its log lines kept. */
async function emulator(tokens: { token: string; orgs: null }[]) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const api = await startTestEmulator({
    tokens,
    profile: 'kosli',
    logger: pino({ level: 'debug' }, sink),
  });
  return { api, log: () => lines.join('') };
}

/** Whether `text` holds `token`, as it is or percent-encoded (booleans: nothing is printed). */
const holds = (text: string, token: string) =>
  text.includes(token) || text.includes(encodeURIComponent(token));

let running: TestEmulator | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('the emulator shows no token sent in a query string or a path', () => {
  it('scrubs access_token, token (any case) and any value, name or path segment equal to a token it accepts, and only those, from its answers, request log and log', async () => {
    const { api, log } = await emulator([{ token: KNOWN, orgs: null }]);
    running = api;
    const auth = { authorization: `Bearer ${KNOWN}` };
    const base = `${api.url}/api/v2/environments/acme`;
    const queries = [
      `access_token=${encodeURIComponent(KNOWN)}`,
      `page=1&token=${OTHER}&per_page=20`,
      `Access_Token=${OTHER}`,
      `api_key=${encodeURIComponent(KNOWN)}`,
      `raw=${KNOWN}`,
      encodeURIComponent(KNOWN),
      'page=2&per_page=50',
    ];
    for (const query of queries) {
      const answer = await send(`${base}?${query}`, { headers: auth });
      expect(answer.status).toBe(200);
    }
    const paths = (await api.getRequests()).map((entry) => entry.path);
    expect(paths).toHaveLength(queries.length);
    for (const expected of [
      '/api/v2/environments/acme?access_token=[REDACTED]',
      '/api/v2/environments/acme?page=1&token=[REDACTED]&per_page=20',
      '/api/v2/environments/acme?Access_Token=[REDACTED]',
      '/api/v2/environments/acme?api_key=[REDACTED]',
      '/api/v2/environments/acme?raw=[REDACTED]',
      '/api/v2/environments/acme?[REDACTED]',
      // A query without a token is kept as it was sent.
      '/api/v2/environments/acme?page=2&per_page=50',
    ])
      expect(paths.includes(expected), expected).toBe(true);
    const recorded = `${JSON.stringify(paths)}\n${log()}`;
    expect(log().includes('"msg":"request"'), 'the log has its request lines').toBe(true);
    for (const token of [KNOWN, OTHER]) expect(holds(recorded, token)).toBe(false);

    // In a path: as a segment, inside one or percent-encoded, in the 404s too.
    await api.reset();
    const encoded = encodeURIComponent(KNOWN);
    const targets = [
      // No route: the 404 quotes the path.
      `/api/v2/${encoded}`,
      `/api/v2/environments/acme/${KNOWN}/x`,
      `/${KNOWN}`,
      `/api/v2/environments/acme/web/archive/key-${encoded}.json`,
      // An org, an environment, a policy that do not exist: the 404 quotes the name (an
      // environment name that breaks the name rule: the 400 quotes it).
      `/api/v2/environments/${encoded}`,
      `/api/v2/environments/acme/${encoded}`,
      `/api/v2/policies/acme/${encoded}`,
      // Part of the token encoded, the rest as it is, hex in lower case.
      `/api/v2/environments/acme/${KNOWN.replace('+', '%2b')}`,
    ];
    const answers: string[] = [];
    for (const path of targets) {
      const answer = await send(`${api.url}${path}`, { headers: auth });
      expect([400, 404], path).toContain(answer.status);
      answers.push(answer.text);
    }
    // Without a token in it, a path is shown as sent.
    const plain = await send(`${api.url}/api/v2/environments/acme/nothing-here`, { headers: auth });
    expect(plain.body).toEqual({
      message: "Environment named 'nothing-here' does not exist for organization 'acme'",
    });
    const admin = await send(`${api.url}/_emulator/${encoded}`);
    expect(admin.status).toBe(404);
    answers.push(admin.text);

    const shown = (await api.getRequests()).map((entry) => entry.path);
    expect(shown).toHaveLength(targets.length + 1);
    expect(shown).toContain('/api/v2/[REDACTED]');
    expect(shown).toContain('/api/v2/environments/acme/web/archive/key-[REDACTED].json');
    expect(shown).toContain('/api/v2/environments/acme/nothing-here');
    expect(answers).toContain(
      JSON.stringify({ message: 'Not found: no route for GET /api/v2/[REDACTED]' }),
    );
    expect(answers).toContain(
      JSON.stringify({ message: "Organization '[REDACTED]' does not exist" }),
    );
    const everything = `${answers.join('\n')}\n${JSON.stringify(shown)}\n${log()}`;
    expect(holds(everything, KNOWN)).toBe(false);
    expect(everything.includes(KNOWN.replace('+', '%2b')), 'partly encoded').toBe(false);
  });

  it('accepting any token, scrubs the one the request was sent with, in a query or a path', async () => {
    const { api, log } = await emulator([]);
    running = api;
    const headers = { authorization: `Bearer ${SENT}` };
    const query = await send(`${api.url}/api/v2/environments/acme?q=${SENT}&page=2`, { headers });
    expect(query.status).toBe(200);
    const answer = await send(`${api.url}/api/v2/environments/${SENT}/x/y`, { headers });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      message: 'Not found: no route for GET /api/v2/environments/[REDACTED]/x/y',
    });
    const paths = (await api.getRequests()).map((entry) => entry.path);
    expect(paths).toEqual([
      '/api/v2/environments/acme?q=[REDACTED]&page=2',
      '/api/v2/environments/[REDACTED]/x/y',
    ]);
    expect(holds(`${answer.text}\n${log()}`, SENT)).toBe(false);
  });
});
