/**
 * The policy documents endpoints as the client speaks them: the multipart upload (read back by the
 * platform's own form parser), the reading of the list, and both over real HTTP against the
 * emulator's kosli profile, through the client's one request path (retries included).
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.ts';
import { ApiError } from '../../src/api/errors.ts';
import { policyUploadBody, readPolicyDocuments } from '../../src/api/policy-documents.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/core/retry-policy.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';

// Random-looking, as a real token is: 12 characters in a row of a token are masked in every
// output, and a token made of words would blank those words out of the messages.
const TOKEN = 'pd-5d1cQ7x2Kw9R';

/** The body, read back as the service would: by the platform's multipart parser. */
async function parsed(body: ReturnType<typeof policyUploadBody>) {
  const form = await new Response(body.bytes, {
    headers: { 'content-type': body.contentType },
  }).formData();
  const file = form.get('policy_file');
  const payload = form.get('payload');
  if (!(file instanceof File)) throw new Error('policy_file is not a file part');
  if (typeof payload !== 'string') throw new Error('payload is not a plain field');
  return {
    keys: [...form.keys()],
    payload: JSON.parse(payload) as unknown,
    filename: file.name,
    text: Buffer.from(await file.arrayBuffer()).toString('utf8'),
  };
}

describe('policyUploadBody', () => {
  it.each([
    ['plain YAML', 'a: 1\n'],
    ['no final newline', 'a: 1'],
    ['CRLF line breaks and blank lines', 'a: 1\r\n\r\nb: 2\r\n'],
    ['text outside ASCII', 'description: "naïve — ✓"\n'],
    ['a line that looks like a boundary', '--envsync-x\r\n--\r\n'],
  ])('carries %s exactly, with the payload', async (_what, content) => {
    const body = policyUploadBody({
      name: 'prod-requirements',
      description: 'What "production" needs',
      comment: 'envsync: git revision 3f2a9c1',
      content,
    });
    expect(body.contentType).toMatch(/^multipart\/form-data; boundary=envsync-[0-9a-f]{32}$/);
    expect(await parsed(body)).toEqual({
      keys: ['payload', 'policy_file'],
      payload: {
        name: 'prod-requirements',
        description: 'What "production" needs',
        type: 'env',
        comment: 'envsync: git revision 3f2a9c1',
      },
      filename: 'prod-requirements.yaml',
      text: content,
    });
  });

  it('leaves the description out of the payload when none is declared', async () => {
    const body = policyUploadBody({ name: 'p', comment: 'envsync', content: 'a: 1\n' });
    expect((await parsed(body)).payload).toEqual({ name: 'p', type: 'env', comment: 'envsync' });
  });

  it('draws another boundary when one occurs in the content', async () => {
    const drawn = ['clash', 'clash', 'fresh'];
    const body = policyUploadBody(
      { name: 'p', comment: 'envsync', content: 'x: clash\n' },
      () => drawn.shift() ?? 'never',
    );
    expect(body.contentType).toBe('multipart/form-data; boundary=fresh');
    expect((await parsed(body)).text).toBe('x: clash\n');
  });
});

describe('readPolicyDocuments', () => {
  const read = (text: string) =>
    readPolicyDocuments('/api/v2/policies/acme', { status: 200, headers: {}, text }, (t) => t);
  const version = (n: number, yaml: string) => ({
    version: n,
    policy_yaml: yaml,
    timestamp: 1,
    created_by: 'x',
  });

  it('reads each document with its latest version, by number, whatever the order', () => {
    const text = JSON.stringify([
      {
        name: 'a',
        description: 'A',
        created_at: 1,
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
    ['not JSON', 'oops', /are not JSON: oops/],
    ['an object', '{"policies": []}', /are not a list/],
    ['an entry that is not an object', '[1]', /entry 0 is not an object/],
    ['an entry without a name', '[{"description": "x"}]', /entry 0 has no name/],
    ['a description that is not text', '[{"name": "a", "description": 1}]', /description/],
    ['versions that are not a list', '[{"name": "a", "versions": {}}]', /versions are not a list/],
    [
      'a version without its YAML',
      '[{"name": "a", "versions": [{"version": 1}]}]',
      /a version has no number or no policy_yaml/,
    ],
    ['a name twice', '[{"name": "a"}, {"name": "a"}]', /show "a" twice/],
  ])('refuses %s, naming the request', (_what, text, message) => {
    let error: unknown;
    try {
      read(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).kind).toBe('invalid-response');
    expect((error as ApiError).message).toMatch(
      /^GET \/api\/v2\/policies\/acme: the policy documents /,
    );
    expect((error as ApiError).message).toMatch(message);
  });
});

describe('the client and the emulator', () => {
  let api: TestEmulator | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });
  const client = (url: string, retries = 0) =>
    createClient({
      apiUrl: new URL(url),
      getToken: () => TOKEN,
      concurrency: 2,
      timeoutMs: 5000,
      policy: { ...DEFAULT_RETRY_POLICY, retries, minDelayMs: 1, maxDelayMs: 2 },
      logger: pino({ level: 'silent' }),
      clock: systemClock,
    });

  it('creates a document, makes a version only when the text changes, and reads them back', async () => {
    api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
    const c = client(api.url);
    try {
      expect(await c.listPolicyDocuments('acme')).toEqual([]);
      const upload = { name: 'prod', description: 'P', comment: 'envsync', content: 'a: 1\n' };
      await c.putPolicyDocument('acme', upload);
      await c.putPolicyDocument('acme', upload);
      await c.putPolicyDocument('acme', { ...upload, content: 'a: 2\n' });
      expect(await c.listPolicyDocuments('acme')).toEqual([
        { name: 'prod', description: 'P', latest: { version: 2, content: 'a: 2\n' } },
      ]);
      const requests = (await api.getRequests()).map((r) => `${r.method} ${r.path} ${r.status}`);
      expect(requests).toEqual([
        'GET /api/v2/policies/acme 200',
        'PUT /api/v2/policies/acme 201',
        'PUT /api/v2/policies/acme 200',
        'PUT /api/v2/policies/acme 200',
        'GET /api/v2/policies/acme 200',
      ]);
    } finally {
      await c.close();
    }
  });

  it('retries an upload the service failed, through the same retry policy', async () => {
    api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
    await api.setFaults({ failRate: 1 });
    const c = client(api.url, 2);
    try {
      const upload = c.putPolicyDocument('acme', {
        name: 'p',
        comment: 'envsync',
        content: 'a: 1\n',
      });
      await expect(upload).rejects.toThrow(/PUT \/api\/v2\/policies\/acme/);
      const puts = (await api.getRequests()).filter((r) => r.method === 'PUT');
      expect(puts.map((r) => r.status)).toEqual([503, 503, 503]);
    } finally {
      await c.close();
    }
  });

  it('the spec profile has no policy documents: a 404 the client reports', async () => {
    api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    const c = client(api.url);
    try {
      await expect(c.listPolicyDocuments('acme')).rejects.toThrow(/GET \/api\/v2\/policies\/acme/);
    } finally {
      await c.close();
    }
  });
});
