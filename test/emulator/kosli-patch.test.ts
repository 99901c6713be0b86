/**
 * The kosli profile's `PATCH /api/v2/environments/{org}/{name}`: the fields given change, the
 * others stay; `""` clears a description (the PUT keeps it); every problem with the body is a 422.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { entriesOf, NOW_MS, RULE, startKosli, VALID, VALIDATION_FAILED } from './api-client.ts';

const PROD = { ...VALID, require_provenance: true, policies: ['p'] };

const { emu, api } = await startKosli(() => NOW_MS);
afterAll(() => emu.close());
beforeEach(async () => {
  await emu.reset();
  const view = { name: 'view', type: 'logical', description: 'all', included_environments: ['eu'] };
  await emu.putStore({
    orgs: {
      acme: [
        { ...PROD, tags: { team: 'core' }, state: true, last_modified_at: 1 },
        { name: 'eu', type: 'S3', description: 'eu' },
        { name: 'us', type: 'S3', description: 'us' },
        { ...view, last_modified_at: 1 },
      ],
    },
  });
});

const entry = async (name: string) => entriesOf(await api.list()).find((env) => env.name === name);
const refusal = (field: string, text: string) => ({
  message: VALIDATION_FAILED,
  errors: { [field]: text },
});

describe('PATCH /api/v2/environments/{org}/{name}', () => {
  it('changes only the description, and answers 200 with the environment', async () => {
    const response = await api.patch('prod', { description: 'Changed' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...(await entry('prod')), require_provenance: true });
    const kept = { type: 'K8S', policies: ['p'], tags: { team: 'core' }, state: true };
    const moved = { last_modified_at: 1_700_000_000, last_changed_at: 1_700_000_000 };
    expect(response.body).toMatchObject({ ...kept, ...moved, description: 'Changed' });
  });

  it('clears a description with "", which the PUT ignores', async () => {
    expect((await api.put({ ...PROD, description: '' })).status).toBe(201);
    expect(await entry('prod')).toMatchObject({ description: 'Production' });
    expect((await api.patch('prod', { description: '' })).status).toBe(200);
    expect(await entry('prod')).toMatchObject({ description: '' });
  });

  it('replaces the members of a logical environment, checked like the PUT', async () => {
    const changed = await api.patch('view', { included_environments: ['us', 'eu'] });
    expect(changed.body).toMatchObject({ included_environments: ['us', 'eu'], description: 'all' });
    expect((await api.patch('view', { included_environments: [] })).status).toBe(200);
    expect(await entry('view')).toMatchObject({ included_environments: [] });
  });

  it('takes include_scaling and keeps it false; a PATCH that changes nothing moves no timestamp', async () => {
    for (const body of [{ include_scaling: true }, {}, { description: 'Production' }]) {
      const response = await api.patch('prod', body);
      expect(response.status).toBe(200);
      const unchanged = { include_scaling: false, last_modified_at: 1, last_changed_at: 1 };
      expect(response.body).toMatchObject(unchanged);
    }
    expect((await emu.getStore()).orgs.acme?.[0]).toMatchObject({ include_scaling: false });
  });

  it.each([
    [{ name: 'other' }, 'unknown field'],
    [{ type: 'S3' }, 'unknown field'],
    [{ policies: [] }, 'unknown field'],
    [{ require_provenance: false }, 'unknown field'],
    [{ tags: {} }, 'unknown field'],
    [{ labels: 1 }, 'unknown field'],
    [{ description: null }, 'must be a string, got null'],
    [{ include_scaling: 'yes' }, 'must be a boolean, got a string'],
    [
      { included_environments: ['eu'] },
      "only a logical environment includes others; this one is of type 'K8S'",
    ],
    [[], 'must be a JSON object, got an array'],
  ])('refuses %j with 422, changing nothing', async (body, text) => {
    const response = await api.patch('prod', body);
    const field = Array.isArray(body) ? 'payload' : (Object.keys(body)[0] ?? '');
    expect([response.status, response.body]).toEqual([422, refusal(field, text)]);
    expect(await entry('prod')).toMatchObject({ description: 'Production', last_modified_at: 1 });
  });

  it.each([
    [['eu', 'ap'], "environment 'ap' does not exist in organization 'acme'"],
    [['a~b'], `'a~b' ${RULE}`],
    [['view'], "'view' cannot include itself"],
  ])('refuses the members %j of a logical environment with 422', async (members, text) => {
    const response = await api.patch('view', { included_environments: members });
    expect([response.status, response.body]).toEqual([422, refusal('included_environments', text)]);
  });

  it('refuses invalid JSON with 422 and another type with 415', async () => {
    const patch = (body: string, type: string) =>
      api.call('/api/v2/environments/acme/prod', {
        method: 'PATCH',
        headers: { 'content-type': type },
        body,
      });
    const json = await patch('{"description":', 'application/json');
    const errors = { payload: expect.stringMatching(/^invalid JSON/) };
    expect([json.status, json.body]).toMatchObject([422, { errors }]);
    expect((await patch('{}', 'text/plain')).status).toBe(415);
  });

  it('answers 404 for a name that does not exist or has been archived, 400 for one that cannot exist', async () => {
    const answers = [];
    answers.push(await api.patch('nope', { description: 'x' }));
    await api.archive('prod');
    answers.push(await api.patch('prod', { description: 'x' }));
    answers.push(await api.patch('-x', { description: 'x' }));
    expect(answers.map(({ status, body }) => [status, body])).toEqual([
      [404, { message: "Environment named 'nope' does not exist for organization 'acme'" }],
      [404, { message: "Environment named 'prod' in organization 'acme' has been archived" }],
      [400, { message: `Environment name '-x' ${RULE}` }],
    ]);
  });

  it('with the ignoredWrites fault, answers with the environment as held and changes nothing', async () => {
    await emu.setFaults({ ignoredWrites: ['environment'] });
    const response = await api.patch('prod', { description: 'Changed' });
    const held = { name: 'prod', description: 'Production' };
    expect([response.status, response.body]).toMatchObject([200, held]);
    expect(await entry('prod')).toMatchObject({ description: 'Production' });
  });
});
