/**
 * The policy documents endpoints as the client speaks them: the reading of the list, and uploads
 * over real HTTP to the emulator's kosli profile (whose form parser reads them back), through the
 * client's one request path, retries included.
 */
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createClient } from '../../src/api/client.ts';
import { readPolicyDocuments } from '../../src/api/policy-documents.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/api/retry-policy.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { startTestEmulator } from '../helpers/emulator.ts';

// Random-looking, as a real token is: any 12 characters of a token in a row are masked in every
// output, and a token made of words would blank those words out of the messages.
const TOKEN = 'pd-5d1cQ7x2Kw9R';

describe('readPolicyDocuments', () => {
  const read = (text: string) =>
    readPolicyDocuments('/api/v2/policies/acme', { status: 200, headers: {}, text }, (t) => t);
  const version = (n: number, yaml: string) => ({ version: n, policy_yaml: yaml, timestamp: 1 });

  it('reads each document with its latest version, by number, whatever the order', () => {
    const text = JSON.stringify([
      {
        name: 'a',
        description: 'A',
        versions: [version(2, 'two'), version(3, 'three'), version(1, 'one')],
      },
      { name: 'b', description: null, created_at: 1, versions: [] },
      { name: 'c', created_at: 1, extra: true },
    ]);
    expect(read(text)).toEqual([
      { name: 'a', description: 'A', latest: { version: 3, content: 'three' } },
      { name: 'b', description: '' },
      { name: 'c', description: '' },
    ]);
  });

  it.each([
    ['not JSON', 'oops', 'are not JSON: oops'],
    [
      'an object',
      '{"policies": []}',
      'are malformed: Invalid input: expected array, received object at the top',
    ],
    [
      'an entry that is not an object',
      '[1]',
      'are malformed: Invalid input: expected object, received number at 0',
    ],
    ['an entry without a name', '[{"description": "x"}]', 'at 0.name'],
    ['a description that is not text', '[{"name": "a", "description": 1}]', 'at 0.description'],
    ['versions that are not a list', '[{"name": "a", "versions": {}}]', 'at 0.versions'],
    [
      'a version without its YAML',
      '[{"name": "a", "versions": [{"version": 1}]}]',
      'at 0.versions.0.policy_yaml',
    ],
    ['a name twice', '[{"name": "a"}, {"name": "a"}]', 'show "a" twice'],
  ])('refuses %s, naming the request', (_what, text, message) => {
    expect(() => read(text)).toThrow(
      expect.objectContaining({
        name: 'ApiError',
        kind: 'invalid-response',
        status: 200,
        message: expect.stringMatching(/^GET \/api\/v2\/policies\/acme: the policy documents /),
      }),
    );
    expect(() => read(text)).toThrow(message);
  });
});

describe('the client and the emulator', () => {
  async function kosli(retries = 0) {
    const api = await startTestEmulator({
      profile: 'kosli',
      tokens: [{ token: TOKEN, orgs: null }],
    });
    const client = createClient({
      apiUrl: new URL(api.url),
      getToken: () => TOKEN,
      concurrency: 2,
      timeoutMs: 5000,
      policy: { ...DEFAULT_RETRY_POLICY, retries, minDelayMs: 1, maxDelayMs: 2 },
      logger: pino({ level: 'silent' }),
      clock: systemClock,
    });
    onTestFinished(async () => {
      await client.close();
      await api.close();
    });
    return { api, client };
  }

  it('creates a document, makes a version only when the text changes, and reads them back', async () => {
    const { api, client } = await kosli();
    expect(await client.listPolicyDocuments('acme')).toEqual([]);
    const upload = { name: 'prod', description: 'P', comment: 'envsync', content: 'a: 1\n' };
    await client.putPolicyDocument('acme', upload);
    await client.putPolicyDocument('acme', upload);
    await client.putPolicyDocument('acme', { ...upload, content: 'a: 2\n' });
    // Without a description, the service keeps the one it has.
    await client.putPolicyDocument('acme', { name: 'prod', comment: 'envsync', content: 'a: 2\n' });
    expect(await client.listPolicyDocuments('acme')).toEqual([
      { name: 'prod', description: 'P', latest: { version: 2, content: 'a: 2\n' } },
    ]);
    const requests = (await api.getRequests()).map((r) => `${r.method} ${r.path} ${r.status}`);
    const put = (status: number) => `PUT /api/v2/policies/acme ${status}`;
    expect(requests).toEqual([
      'GET /api/v2/policies/acme 200',
      put(201),
      put(200),
      put(200),
      put(200),
      'GET /api/v2/policies/acme 200',
    ]);
  });

  it('carries any text exactly: CRLF, no final newline, outside ASCII, a line like a boundary', async () => {
    const { client } = await kosli();
    const contents = [
      'a: 1',
      'a: 1\r\n\r\nb: 2\r\n',
      'description: "naïve — ✓"\n',
      '--x\r\n--\r\n',
    ];
    for (const [i, content] of contents.entries())
      await client.putPolicyDocument('acme', { name: `p${i}`, comment: 'envsync', content });
    const held = await client.listPolicyDocuments('acme');
    expect(held.map((d) => d.latest?.content)).toEqual(contents);
  });

  it('retries an upload the service failed, through the same retry policy', async () => {
    const { api, client } = await kosli(2);
    await api.setFaults({ failRate: 1 });
    const upload = client.putPolicyDocument('acme', {
      name: 'p',
      comment: 'envsync',
      content: 'a: 1\n',
    });
    await expect(upload).rejects.toThrow(/PUT \/api\/v2\/policies\/acme/);
    const puts = (await api.getRequests()).filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.status)).toEqual([503, 503, 503]);
  });
});
