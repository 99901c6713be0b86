/** The API in the default `spec` profile: statuses, validation, auth, routing. */
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { Client, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { JsonResponse, SendOptions, TestEmulator } from '../helpers/emulator.ts';

const ALL = 'Bearer token-all';
const ACME_ONLY = 'Bearer token-acme';
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };

let emu: TestEmulator;

beforeAll(async () => {
  emu = await startTestEmulator({
    orgs: ['acme', 'beta'],
    tokens: [
      { token: 'token-all', orgs: null },
      { token: 'token-acme', orgs: ['acme'] },
    ],
  });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

function call(path: string, options: SendOptions = {}): Promise<JsonResponse> {
  return send(`${emu.url}${path}`, {
    ...options,
    headers: { authorization: ALL, ...options.headers },
    dispatcher: emu.agent,
  });
}

function put(
  org: string,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return call(`/api/v2/environments/${org}`, { method: 'PUT', json, headers });
}

/** `count` chunks of `size` spaces, streamed (undici sends them chunked). */
async function* spaces(count: number, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < count; i += 1) yield Buffer.alloc(size, 0x20);
}

/** The keys of a 400 body's `errors` object, in order. */
function errorFields(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || !('errors' in body)) return [];
  const { errors } = body;
  return typeof errors === 'object' && errors !== null ? Object.keys(errors) : [];
}

/** Raw bytes over a fresh TCP connection; resolves with everything the server sent back. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('PUT /api/v2/environments/{org}', () => {
  it('creates an environment: 201 with the JSON body "OK"', async () => {
    const response = await put('acme', VALID);
    expect(response.status).toBe(201);
    expect(response.body).toBe('OK');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const store = await emu.getStore();
    expect(store.orgs.acme).toEqual([
      expect.objectContaining({
        org: 'acme',
        name: 'prod',
        type: 'K8S',
        description: 'Production',
        include_scaling: false,
        policies: [],
        tags: {},
        last_reported_at: null,
        state: null,
        included_environments: null,
        archived: false,
      }),
    ]);
  });

  it('updates an existing environment (upsert): 201 "OK" again, still one environment', async () => {
    expect((await put('acme', VALID)).status).toBe(201);
    const update = {
      ...VALID,
      description: 'Changed',
      type: 'S3',
      include_scaling: true,
      policies: ['p1', 'p2'],
    };
    const response = await put('acme', update);
    expect(response.status).toBe(201);
    expect(response.body).toBe('OK');
    const store = await emu.getStore();
    expect(store.orgs.acme).toHaveLength(1);
    expect(store.orgs.acme?.[0]).toMatchObject({
      description: 'Changed',
      type: 'S3',
      include_scaling: true,
      policies: ['p1', 'p2'],
    });
  });

  it('in the spec profile an update to description "" and include_scaling true takes effect', async () => {
    await put('acme', { ...VALID, include_scaling: false });
    await put('acme', { ...VALID, description: '', include_scaling: true });
    const store = await emu.getStore();
    expect(store.orgs.acme?.[0]).toMatchObject({ description: '', include_scaling: true });
  });

  it('keeps environments of different orgs apart', async () => {
    await put('acme', VALID);
    await put('beta', { ...VALID, description: 'Beta prod' });
    const acme = await call('/api/v2/environments/acme');
    const beta = await call('/api/v2/environments/beta');
    expect(acme.body).toEqual({
      env: [{ org: 'acme', name: 'prod', type: 'K8S', description: 'Production' }],
    });
    expect(beta.body).toEqual({
      env: [{ org: 'beta', name: 'prod', type: 'K8S', description: 'Beta prod' }],
    });
  });

  it('gives logical environments an empty included_environments list', async () => {
    await put('acme', { ...VALID, type: 'logical' });
    const store = await emu.getStore();
    expect(store.orgs.acme?.[0]?.included_environments).toEqual([]);
  });

  it.each([
    ['application/json; charset=utf-8'],
    ['Application/JSON'],
    ['application/json;charset=UTF-8'],
  ])('accepts Content-Type %s', async (contentType) => {
    const response = await put('acme', VALID, { 'content-type': contentType });
    expect(response.status).toBe(201);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/jsonx']])(
    'answers 415 to Content-Type %s',
    async (contentType) => {
      const response = await put('acme', VALID, { 'content-type': contentType });
      expect(response.status).toBe(415);
      expect(response.body).toEqual({ message: expect.stringContaining('application/json') });
    },
  );

  it('answers 415 when Content-Type is missing', async () => {
    const response = await call('/api/v2/environments/acme', {
      method: 'PUT',
      body: JSON.stringify(VALID),
    });
    expect(response.status).toBe(415);
  });

  it('answers 413 to a body over 1 MiB (declared length) and keeps serving', async () => {
    const body = JSON.stringify({ ...VALID, description: 'x'.repeat(1024 * 1024) });
    const response = await call('/api/v2/environments/acme', {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: expect.any(String) });
    expect((await put('acme', VALID)).status).toBe(201);
  });

  it('answers 413 to a chunked body over 1 MiB without buffering it', async () => {
    const streamed = await request(`${emu.url}/api/v2/environments/acme`, {
      method: 'PUT',
      headers: { authorization: ALL, 'content-type': 'application/json' },
      body: Readable.from(spaces(40, 64 * 1024)),
      dispatcher: emu.agent,
    });
    expect(streamed.statusCode).toBe(413);
    expect(streamed.headers['transfer-encoding']).toBeUndefined();
    await streamed.body.dump();
    expect((await put('acme', VALID)).status).toBe(201);
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const base = JSON.stringify({ ...VALID, description: '' });
    const description = 'x'.repeat(1024 * 1024 - base.length);
    const body = JSON.stringify({ ...VALID, description });
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const response = await call('/api/v2/environments/acme', {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
  });
});

describe('PUT validation: 400 {"message": "Input payload validation failed", "errors": {...}}', () => {
  const cases: [string, string, string][] = [
    ['invalid JSON', '{"name": "prod",', 'payload'],
    ['an empty body', '', 'payload'],
    ['a JSON array', '[]', 'payload'],
    ['a JSON string', '"prod"', 'payload'],
    ['JSON null', 'null', 'payload'],
    ['a missing name', JSON.stringify({ description: 'd', type: 'K8S' }), 'name'],
    ['a missing description', JSON.stringify({ name: 'prod', type: 'K8S' }), 'description'],
    ['a missing type', JSON.stringify({ name: 'prod', description: 'd' }), 'type'],
    ['description null', JSON.stringify({ ...VALID, description: null }), 'description'],
    ['a numeric description', JSON.stringify({ ...VALID, description: 5 }), 'description'],
    ['a numeric name', JSON.stringify({ ...VALID, name: 42 }), 'name'],
    ['an empty name', JSON.stringify({ ...VALID, name: '' }), 'name'],
    ['a name starting with "-"', JSON.stringify({ ...VALID, name: '-prod' }), 'name'],
    ['a name starting with "."', JSON.stringify({ ...VALID, name: '.prod' }), 'name'],
    ['a name with a space', JSON.stringify({ ...VALID, name: 'my prod' }), 'name'],
    ['a name with a slash', JSON.stringify({ ...VALID, name: 'a/b' }), 'name'],
    ['a non-ASCII name', JSON.stringify({ ...VALID, name: 'prød' }), 'name'],
    ['type in the wrong case', JSON.stringify({ ...VALID, type: 'k8s' }), 'type'],
    ['a type only the kosli profile knows', JSON.stringify({ ...VALID, type: 'ECS' }), 'type'],
    ['a numeric type', JSON.stringify({ ...VALID, type: 1 }), 'type'],
    [
      'include_scaling as a string',
      JSON.stringify({ ...VALID, include_scaling: 'yes' }),
      'include_scaling',
    ],
    [
      'include_scaling null',
      JSON.stringify({ ...VALID, include_scaling: null }),
      'include_scaling',
    ],
    ['policies as a string', JSON.stringify({ ...VALID, policies: 'p1' }), 'policies'],
    ['policies with a number', JSON.stringify({ ...VALID, policies: ['p1', 2] }), 'policies'],
    ['policies null', JSON.stringify({ ...VALID, policies: null }), 'policies'],
    ['an unknown field', JSON.stringify({ ...VALID, labels: {} }), 'labels'],
    [
      'a "__proto__" field',
      `{"name":"prod","description":"d","type":"K8S","__proto__":{}}`,
      '__proto__',
    ],
  ];

  it.each(cases)('rejects %s', async (_label, body, field) => {
    const response = await call('/api/v2/environments/acme', {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Input payload validation failed',
      errors: { [field]: expect.any(String) },
    });
    expect(errorFields(response.body)).toEqual([field]);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it('rejects a body that is not UTF-8', async () => {
    const response = await call('/api/v2/environments/acme', {
      method: 'PUT',
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errors: { payload: expect.stringContaining('UTF-8') } });
  });

  it('reports every problem at once', async () => {
    const response = await put('acme', { name: '-x', description: null, type: 'k8s', extra: 1 });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Input payload validation failed',
      errors: {
        name: expect.any(String),
        description: expect.any(String),
        type: expect.stringContaining('K8S, S3, logical'),
        extra: 'unknown field',
      },
    });
  });

  it.each([['a'], ['A1'], ['prod-eu.1_b'], ['0']])('accepts the name %s', async (name) => {
    expect((await put('acme', { ...VALID, name })).status).toBe(201);
  });

  it.each([['K8S'], ['S3'], ['logical']])('accepts the type %s', async (type) => {
    expect((await put('acme', { ...VALID, type })).status).toBe(201);
  });
});

describe('GET /api/v2/environments/{org}', () => {
  it('answers 200 {"env": []} for an org without environments', async () => {
    const response = await call('/api/v2/environments/acme');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ env: [] });
  });

  it('lists exactly org, name, type, description, sorted by name', async () => {
    for (const name of ['zeta', 'Alpha', 'beta', 'alpha', '10']) {
      await put('acme', { ...VALID, name, include_scaling: true, policies: ['p'] });
    }
    const response = await call('/api/v2/environments/acme');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      env: ['10', 'Alpha', 'alpha', 'beta', 'zeta'].map((name) => ({
        org: 'acme',
        name,
        type: 'K8S',
        description: 'Production',
      })),
    });
  });

  it('ignores page parameters in the spec profile', async () => {
    await put('acme', VALID);
    const response = await call('/api/v2/environments/acme?page=1&per_page=1');
    expect(response.body).toEqual({ env: [expect.objectContaining({ name: 'prod' })] });
  });

  it('percent-decodes the org segment', async () => {
    await put('acme', VALID);
    const response = await call('/api/v2/environments/%61cme');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ env: [expect.objectContaining({ org: 'acme' })] });
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await call('/api/v2/environments/acme', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    expect(Number(response.headers['content-length'])).toBeGreaterThan(0);
  });

  it('leaves archived environments out', async () => {
    await emu.putStore({
      orgs: {
        acme: [
          { name: 'old', type: 'K8S', description: 'gone', archived: true },
          { name: 'prod', type: 'K8S', description: 'live' },
        ],
      },
    });
    const response = await call('/api/v2/environments/acme');
    expect(response.body).toEqual({
      env: [{ org: 'acme', name: 'prod', type: 'K8S', description: 'live' }],
    });
  });
});

describe('authentication and authorization', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an empty Authorization header', ''],
    ['the Bearer scheme without a token', 'Bearer'],
    ['a token with a space', 'Bearer two words'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a token without a scheme', 'token-all'],
    ['an unknown token', 'Bearer not-a-known-token'],
  ])('answers 401 to %s', async (_label, header) => {
    const response = await send(`${emu.url}/api/v2/environments/acme`, {
      headers: header === undefined ? {} : { authorization: header },
      dispatcher: emu.agent,
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: expect.any(String) });
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 to a PUT without a token and stores nothing', async () => {
    const response = await send(`${emu.url}/api/v2/environments/acme`, {
      method: 'PUT',
      json: VALID,
      dispatcher: emu.agent,
    });
    expect(response.status).toBe(401);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it('matches the Bearer scheme case-insensitively', async () => {
    const response = await call('/api/v2/environments/acme', {
      headers: { authorization: 'bearer token-all' },
    });
    expect(response.status).toBe(200);
  });

  it('lets a limited token use its own org', async () => {
    const response = await put('acme', VALID, { authorization: ACME_ONLY });
    expect(response.status).toBe(201);
  });

  it('answers 403 to a limited token on another org', async () => {
    for (const method of ['GET', 'PUT'] as const) {
      const response = await call('/api/v2/environments/beta', {
        method,
        headers: { authorization: ACME_ONLY },
        ...(method === 'PUT' ? { json: VALID } : {}),
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        message: "You don't have permission to access this resource",
      });
    }
  });

  it('checks the token before the org: 401 for an unknown org without a token', async () => {
    const response = await send(`${emu.url}/api/v2/environments/nowhere`, {
      dispatcher: emu.agent,
    });
    expect(response.status).toBe(401);
  });

  it('checks the scope before the org: 403 for a limited token on an unknown org', async () => {
    const response = await call('/api/v2/environments/nowhere', {
      headers: { authorization: ACME_ONLY },
    });
    expect(response.status).toBe(403);
  });
});

describe('not found, wrong method', () => {
  it('answers 404 with a message for an org that does not exist', async () => {
    for (const method of ['GET', 'PUT'] as const) {
      const response = await call('/api/v2/environments/nowhere', {
        method,
        ...(method === 'PUT' ? { json: VALID } : {}),
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: "Organization 'nowhere' does not exist" });
    }
  });

  it.each([
    ['an encoded slash', '/api/v2/environments/ac%2Fme'],
    ['an encoded space', '/api/v2/environments/ac%20me'],
    ['broken percent-encoding', '/api/v2/environments/ac%E0%A4%A'],
    ['a leading dash', '/api/v2/environments/-acme'],
  ])('answers 404 for an org segment with %s', async (_label, path) => {
    const response = await call(path);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: expect.stringContaining('does not exist') });
  });

  it.each([
    ['/'],
    ['/api'],
    ['/api/v2/environments'],
    ['/api/v2/environments/'],
    ['/api/v1/environments/acme'],
    ['/api/v2/environments/acme/'],
    ['/api/v2/environments/acme/prod'],
    ['/api/v2/environments/acme/prod/archive'],
    ['/_emulator'],
  ])('answers 404 for the path %s', async (path) => {
    const response = await call(path);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: expect.any(String) });
  });

  it.each([['POST'], ['DELETE'], ['PATCH'], ['OPTIONS']] as const)(
    'answers 405 with Allow to %s',
    async (method) => {
      const response = await call('/api/v2/environments/acme', { method });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD, PUT');
      expect(response.body).toEqual({ message: expect.any(String) });
    },
  );
});

describe('open configuration', () => {
  it('without --org every org exists, and without --token any Bearer token works', async () => {
    const open = await startTestEmulator();
    try {
      const response = await send(`${open.url}/api/v2/environments/whatever-org`, {
        method: 'PUT',
        headers: { authorization: 'Bearer anything' },
        json: VALID,
        dispatcher: open.agent,
      });
      expect(response.status).toBe(201);
      const missing = await send(`${open.url}/api/v2/environments/whatever-org`, {
        dispatcher: open.agent,
      });
      expect(missing.status).toBe(401);
    } finally {
      await open.close();
    }
  });
});

describe('robustness', () => {
  it('answers garbage with 400 and keeps serving', async () => {
    const answer = await rawExchange(emu.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"message"');
    expect((await call('/api/v2/environments/acme')).status).toBe(200);
  });

  it('answers an oversized header with 431', async () => {
    const answer = await rawExchange(
      emu.port,
      `GET /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
  });

  it('answers a broken chunked body with 400', async () => {
    const answer = await rawExchange(
      emu.port,
      'PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-all\r\n' +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('survives a client that disappears in the middle of a body', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(emu.port, '127.0.0.1', () => {
        socket.write(
          'PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer token-all\r\n' +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":',
        );
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    expect((await put('acme', VALID)).status).toBe(201);
  });

  it('serves several requests over one keep-alive connection', async () => {
    const client = new Client(emu.url, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => {
      connections += 1;
    });
    try {
      for (let i = 0; i < 5; i += 1) {
        const response = await send(`${emu.url}/api/v2/environments/acme`, {
          method: 'PUT',
          headers: { authorization: ALL },
          json: { ...VALID, name: `env-${i}` },
          dispatcher: client,
        });
        expect(response.status).toBe(201);
        expect(response.headers.connection).toBe('keep-alive');
      }
      const listing = await send(`${emu.url}/api/v2/environments/acme`, {
        headers: { authorization: ALL },
        dispatcher: client,
      });
      expect(listing.status).toBe(200);
      expect(connections).toBe(1);
    } finally {
      await client.close();
    }
  });
});
