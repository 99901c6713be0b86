/** The API in the default `spec` profile (the contract): upsert, listing, validation, access. */
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { JsonResponse, SendOptions } from '../helpers/emulator.ts';
import { exactly, RULE, VALID, VALIDATION_FAILED } from './api-client.ts';

const tokens = [
  { token: 'token-all', orgs: null },
  { token: 'token-acme', orgs: ['acme'] },
];
const emu = await startTestEmulator({ orgs: ['acme', 'beta'], tokens });
afterAll(() => emu.close());
beforeEach(() => emu.reset());

function call(path: string, options: SendOptions = {}, token = 'token-all'): Promise<JsonResponse> {
  const headers = { authorization: `Bearer ${token}`, ...options.headers };
  return send(`${emu.url}${path}`, { ...options, headers, dispatcher: emu.agent });
}
const put = (json: unknown, org = 'acme', headers: Record<string, string> = {}) =>
  call(`/api/v2/environments/${org}`, { method: 'PUT', json, headers });
const list = (org = 'acme') => call(`/api/v2/environments/${org}`);
const JSON_TYPE: Record<string, string> = { 'content-type': 'application/json' };
const putText = (body: string | Buffer, headers = JSON_TYPE) =>
  call('/api/v2/environments/acme', { method: 'PUT', body, headers });

describe('PUT /api/v2/environments/{org}', () => {
  it('creates with the contract defaults, then updates every field given: 201 "OK" both times', async () => {
    const created = await put(VALID);
    expect([created.status, created.body]).toEqual([201, 'OK']);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    const defaults = {
      include_scaling: false,
      policies: [],
      tags: {},
      state: null,
      archived: false,
    };
    const prod = { org: 'acme', name: 'prod', included_environments: null, ...defaults };
    expect((await emu.getStore()).orgs.acme).toEqual([expect.objectContaining(prod)]);
    const changed = { description: '', type: 'S3', include_scaling: true, policies: ['p'] };
    expect((await put({ ...VALID, ...changed })).body).toBe('OK');
    // The contract's service applies "" and include_scaling true; an update that leaves the
    // optional fields out keeps them.
    await put({ ...VALID, description: '', type: 'S3' });
    expect((await emu.getStore()).orgs.acme).toEqual([expect.objectContaining(changed)]);
  });

  it('keeps orgs apart, and gives a logical environment an empty member list', async () => {
    await put(VALID);
    await put({ ...VALID, type: 'logical', description: 'Beta' }, 'beta');
    expect((await list()).body).toEqual({ env: [{ org: 'acme', ...VALID }] });
    const beta = (await emu.getStore()).orgs.beta?.[0];
    expect(beta).toMatchObject({ description: 'Beta', included_environments: [] });
  });

  it.each([
    ['application/json; charset=utf-8', 201],
    ['Application/JSON', 201],
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/jsonx', 415],
    [undefined, 415],
  ])('answers Content-Type %s with %i', async (type, status) => {
    const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
    expect((await putText(JSON.stringify(VALID), headers)).status).toBe(status);
  });

  it('takes a body of exactly 1 MiB, answers 413 past it (declared or chunked, never buffered), and serves on', async () => {
    const base = JSON.stringify({ ...VALID, description: '' });
    const exact = JSON.stringify({ ...VALID, description: 'x'.repeat(1024 * 1024 - base.length) });
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    expect((await putText(exact)).status).toBe(201);
    expect((await putText(`${exact} `)).status).toBe(413);
    const streamed = await request(`${emu.url}/api/v2/environments/acme`, {
      method: 'PUT',
      headers: { authorization: 'Bearer token-all', 'content-type': 'application/json' },
      body: Readable.from(Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x20))),
      dispatcher: emu.agent,
    });
    expect([streamed.statusCode, streamed.headers['transfer-encoding']]).toEqual([413, undefined]);
    await streamed.body.dump();
    expect((await put(VALID)).status).toBe(201);
  });
});

describe('PUT validation: 400 {"message": "Input payload validation failed", "errors": {...}}', () => {
  it.each([
    ['invalid JSON', '{"name": "prod",', 'payload', /^invalid JSON/],
    ['an empty body', '', 'payload', /empty/],
    ['a body not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'payload', /UTF-8/],
    ['a JSON array', '[]', 'payload', 'must be a JSON object, got an array'],
    ['JSON null', 'null', 'payload', /got null/],
    ['no name', { description: 'd', type: 'K8S' }, 'name', 'is required'],
    ['no description', { name: 'prod', type: 'K8S' }, 'description', 'is required'],
    ['no type', { name: 'prod', description: 'd' }, 'type', 'is required'],
    ['description null', { ...VALID, description: null }, 'description', /got null/],
    ['a numeric name', { ...VALID, name: 42 }, 'name', /must be a string, got a number/],
    ...['', '-prod', '.prod', '_prod', 'my prod', 'a/b', 'prød', 'a~b'].map(
      (name) => [`the name "${name}"`, { ...VALID, name }, 'name', `'${name}' ${RULE}`] as const,
    ),
    [
      'a type in the wrong case',
      { ...VALID, type: 'k8s' },
      'type',
      "'k8s' is not one of K8S, S3, logical",
    ],
    ['a type of the kosli profile', { ...VALID, type: 'ECS' }, 'type', /not one of/],
    ['include_scaling "yes"', { ...VALID, include_scaling: 'yes' }, 'include_scaling', /a string/],
    ['include_scaling null', { ...VALID, include_scaling: null }, 'include_scaling', /got null/],
    [
      'policies with a number',
      { ...VALID, policies: ['p1', 2] },
      'policies',
      /an array of strings/,
    ],
    ['policies null', { ...VALID, policies: null }, 'policies', /got null/],
    [
      'require_provenance',
      { ...VALID, require_provenance: true },
      'require_provenance',
      'unknown field',
    ],
    ['members', { ...VALID, included_environments: [] }, 'included_environments', 'unknown field'],
    ['an unknown field', { ...VALID, labels: {} }, 'labels', 'unknown field'],
    [
      'a "__proto__" field',
      '{"name":"p","description":"d","type":"K8S","__proto__":{}}',
      '__proto__',
      'unknown field',
    ],
  ] as const)('refuses %s, naming it', async (_label, body, field, text) => {
    const response = await putText(
      typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    );
    const errors = { [field]: expect.stringMatching(exactly(text)) };
    expect([response.status, response.body]).toEqual([400, { message: VALIDATION_FAILED, errors }]);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it('lists every problem at once', async () => {
    const response = await put({ name: '-x', description: null, type: 'k8s', extra: 1 });
    const errors = Object.keys((response.body as { errors: object }).errors).toSorted();
    expect(errors).toEqual(['description', 'extra', 'name', 'type']);
  });

  it.each([['a'], ['A1'], ['prod-eu.1_b'], ['0']])('accepts the name %s', async (name) => {
    expect((await put({ ...VALID, name })).status).toBe(201);
  });
});

describe('GET /api/v2/environments/{org}', () => {
  it('lists exactly org, name, type and description, by code unit, live ones only; ignores a page query', async () => {
    expect((await list()).body).toEqual({ env: [] });
    for (const name of ['zeta', 'Alpha', 'beta', 'alpha', '10']) {
      await put({ ...VALID, name, include_scaling: true, policies: ['p'] });
    }
    const names = ['10', 'Alpha', 'alpha', 'beta', 'zeta'];
    const expected = { env: names.map((name) => ({ org: 'acme', ...VALID, name })) };
    expect((await list()).body).toEqual(expected);
    expect((await call('/api/v2/environments/acme?page=1&per_page=1')).body).toEqual(expected);
    await emu.putStore({
      orgs: {
        acme: [
          { ...VALID, archived: true },
          { ...VALID, name: 'a' },
        ],
      },
    });
    expect((await list()).body).toEqual({ env: [{ org: 'acme', ...VALID, name: 'a' }] });
  });

  it('percent-decodes the org segment, and answers HEAD like GET without a body', async () => {
    await put(VALID);
    const decoded = await call('/api/v2/environments/%61cme');
    expect(decoded.body).toEqual({ env: [{ org: 'acme', ...VALID }] });
    const head = await call('/api/v2/environments/acme', { method: 'HEAD' });
    expect([head.status, head.text]).toEqual([200, '']);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });
});

describe('access: 401, 403, 404, 405', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an empty one', ''],
    ['Bearer without a token', 'Bearer'],
    ['a token with a space', 'Bearer two words'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a token without a scheme', 'token-all'],
    ['an unknown token', 'Bearer not-a-known-token'],
  ])('answers 401 with a Bearer challenge to %s, and stores nothing', async (_label, header) => {
    const headers = header === undefined ? {} : { authorization: header };
    const url = `${emu.url}/api/v2/environments/acme`;
    const response = await send(url, {
      method: 'PUT',
      json: VALID,
      headers,
      dispatcher: emu.agent,
    });
    expect([response.status, response.body]).toEqual([401, { message: expect.any(String) }]);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it('reads the scheme in any case, and holds a limited token to its orgs, before any org check', async () => {
    const lower = { headers: { authorization: 'bearer token-all' } };
    expect((await call('/api/v2/environments/acme', lower)).status).toBe(200);
    expect((await put(VALID, 'acme', { authorization: 'Bearer token-acme' })).status).toBe(201);
    for (const org of ['beta', 'nowhere']) {
      const response = await call(`/api/v2/environments/${org}`, {}, 'token-acme');
      const message = "You don't have permission to access this resource";
      expect([response.status, response.body]).toEqual([403, { message }]);
    }
    // The token first: an org that does not exist is a 401 without one.
    const anonymous = await send(`${emu.url}/api/v2/environments/nowhere`, {
      dispatcher: emu.agent,
    });
    expect(anonymous.status).toBe(401);
  });

  it.each([
    ['nowhere', 'nowhere'],
    ['ac%2Fme', 'ac/me'],
    ['ac%20me', 'ac me'],
    ['ac%E0%A4%A', 'ac%E0%A4%A'],
    ['-acme', '-acme'],
    ['acme~eu', 'acme~eu'],
  ])('answers 404 for the org %s', async (org, shown) => {
    for (const method of ['GET', 'PUT'] as const) {
      const response = await call(`/api/v2/environments/${org}`, { method, json: VALID });
      const message = `Organization '${shown}' does not exist`;
      expect([response.status, response.body]).toEqual([404, { message }]);
    }
  });

  it.each([
    '/',
    '/api/v2/environments',
    '/api/v2/environments/',
    '/api/v1/environments/acme',
    '/api/v2/environments/acme/',
    '/_emulator',
  ])('answers 404 for the path %s', async (path) => {
    const response = await call(path);
    expect([response.status, response.body]).toEqual([404, { message: expect.any(String) }]);
  });

  it.each(['POST', 'DELETE', 'PATCH', 'OPTIONS'] as const)(
    'answers 405 with Allow to %s',
    async (method) => {
      const response = await call('/api/v2/environments/acme', { method });
      expect([response.status, response.headers.allow]).toEqual([405, 'GET, HEAD, PUT']);
    },
  );

  it('without orgs every org exists, and without tokens any Bearer token works', async () => {
    const open = await startTestEmulator();
    try {
      const url = `${open.url}/api/v2/environments/whatever-org`;
      const headers = { authorization: 'Bearer anything' };
      const response = await send(url, {
        method: 'PUT',
        headers,
        json: VALID,
        dispatcher: open.agent,
      });
      expect(response.status).toBe(201);
      expect((await send(url, { dispatcher: open.agent })).status).toBe(401);
    } finally {
      await open.close();
    }
  });
});
