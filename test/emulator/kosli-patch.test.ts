/**
 * The kosli profile's `PATCH /api/v2/environments/{org}/{name}`: the fields given change, the
 * others stay; `""` clears a description (the PUT keeps it); every problem with the body is a 422.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, entriesOf } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const NOW_MS = 1_700_000_000_000;
const PROD = {
  name: 'prod',
  type: 'K8S',
  description: 'Production',
  require_provenance: true,
  policies: ['p'],
};
const RULE =
  'must start with a letter or number, and only contain letters, numbers, `.`, `-` and `_`';

let emu: TestEmulator;
let api: ApiClient;
let nowMs = NOW_MS;

beforeAll(async () => {
  emu = await startTestEmulator({
    profile: 'kosli',
    tokens: [{ token: TOKEN, orgs: null }],
    now: () => nowMs,
  });
  api = apiClient(emu);
});
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS;
  await emu.reset();
  await emu.putStore({
    orgs: {
      acme: [
        { ...PROD, tags: { team: 'core' }, state: true, last_modified_at: 1 },
        { name: 'eu', type: 'S3', description: 'eu' },
        { name: 'us', type: 'S3', description: 'us' },
        {
          name: 'view',
          type: 'logical',
          description: 'all',
          included_environments: ['eu'],
          last_modified_at: 1,
        },
      ],
    },
  });
});

const entry = async (name: string) => entriesOf(await api.list()).find((env) => env.name === name);

describe('PATCH /api/v2/environments/{org}/{name}', () => {
  it('changes only the description, and answers 200 with the environment', async () => {
    const response = await api.patch('prod', { description: 'Changed' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...(await entry('prod')), require_provenance: true });
    expect(response.body).toMatchObject({
      description: 'Changed',
      type: 'K8S',
      policies: ['p'],
      tags: { team: 'core' },
      state: true,
      last_modified_at: 1_700_000_000,
      last_changed_at: 1_700_000_000,
    });
  });

  it('clears a description with "", which the PUT ignores', async () => {
    expect((await api.put({ ...PROD, description: '' })).status).toBe(201);
    expect(await entry('prod')).toMatchObject({ description: 'Production' });
    expect((await api.patch('prod', { description: '' })).status).toBe(200);
    expect(await entry('prod')).toMatchObject({ description: '' });
  });

  it('replaces the members of a logical environment, checked like the PUT', async () => {
    expect((await api.patch('view', { included_environments: ['us', 'eu'] })).body).toMatchObject({
      included_environments: ['us', 'eu'],
      description: 'all',
    });
    expect((await api.patch('view', { included_environments: [] })).status).toBe(200);
    expect(await entry('view')).toMatchObject({ included_environments: [] });
  });

  it('takes include_scaling and keeps it false; a PATCH that changes nothing moves no timestamp', async () => {
    for (const body of [{ include_scaling: true }, {}, { description: 'Production' }]) {
      const response = await api.patch('prod', body);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        include_scaling: false,
        last_modified_at: 1,
        last_changed_at: 1,
      });
    }
    expect((await emu.getStore()).orgs.acme?.[0]).toMatchObject({ include_scaling: false });
  });

  it.each([
    ['name', { name: 'other' }, 'name', 'unknown field'],
    ['type', { type: 'S3' }, 'type', 'unknown field'],
    ['policies', { policies: [] }, 'policies', 'unknown field'],
    ['require_provenance', { require_provenance: false }, 'require_provenance', 'unknown field'],
    ['tags', { tags: {} }, 'tags', 'unknown field'],
    ['an unknown field', { labels: 1 }, 'labels', 'unknown field'],
    ['description null', { description: null }, 'description', 'must be a string, got null'],
    [
      'include_scaling as a string',
      { include_scaling: 'yes' },
      'include_scaling',
      'must be a boolean, got a string',
    ],
    [
      'members of a K8S environment',
      { included_environments: ['eu'] },
      'included_environments',
      "only a logical environment includes others; this one is of type 'K8S'",
    ],
    ['a body that is a list', [], 'payload', 'must be a JSON object, got an array'],
  ])('refuses %s with 422, changing nothing', async (_label, body, field, text) => {
    const response = await api.patch('prod', body);
    expect([response.status, response.body]).toEqual([
      422,
      { message: 'Input payload validation failed', errors: { [field]: text } },
    ]);
    expect(await entry('prod')).toMatchObject({ description: 'Production', last_modified_at: 1 });
  });

  it.each([
    ['an unknown member', ['eu', 'ap'], "environment 'ap' does not exist in organization 'acme'"],
    ['a bad member name', ['a~b'], `'a~b' ${RULE}`],
    ['itself', ['view'], "'view' cannot include itself"],
  ])('refuses %s of a logical environment with 422', async (_label, members, text) => {
    const response = await api.patch('view', { included_environments: members });
    expect([response.status, response.body]).toEqual([
      422,
      { message: 'Input payload validation failed', errors: { included_environments: text } },
    ]);
  });

  it('refuses invalid JSON with 422 and another type with 415', async () => {
    const json = await api.call('/api/v2/environments/acme/prod', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"description":',
    });
    expect([json.status, json.body]).toMatchObject([
      422,
      { errors: { payload: expect.stringMatching(/^invalid JSON/) } },
    ]);
    const text = await api.call('/api/v2/environments/acme/prod', {
      method: 'PATCH',
      body: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('answers 404 for a name that does not exist or has been archived, 400 for one that cannot exist', async () => {
    const unknown = await api.patch('nope', { description: 'x' });
    expect([unknown.status, unknown.body]).toEqual([
      404,
      { message: "Environment named 'nope' does not exist for organization 'acme'" },
    ]);
    await api.archive('prod');
    const archived = await api.patch('prod', { description: 'x' });
    expect([archived.status, archived.body]).toEqual([
      404,
      { message: "Environment named 'prod' in organization 'acme' has been archived" },
    ]);
    const bad = await api.patch('-x', { description: 'x' });
    expect([bad.status, bad.body]).toEqual([400, { message: `Environment name '-x' ${RULE}` }]);
  });

  it('with the ignoredWrites fault, answers with the environment as held and changes nothing', async () => {
    await emu.setFaults({ ignoredWrites: ['environment'] });
    const response = await api.patch('prod', { description: 'Changed' });
    expect([response.status, response.body]).toMatchObject([
      200,
      { name: 'prod', description: 'Production' },
    ]);
    expect(await entry('prod')).toMatchObject({ description: 'Production' });
  });
});
