/** `sync --plan FILE` applies exactly what was reviewed, or nothing, in both profiles. */
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { integrityOf } from '../../src/engine/saved-plan.ts';
import { ACME } from '../helpers/fixtures.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, manifests, run } = syncWorld();

type Plan = {
  version: number;
  integrity?: string;
  orgs: {
    org: string;
    changes: { name: string; fields: Record<string, unknown>; desired: Record<string, unknown> }[];
  }[];
} & Record<string, unknown>;

/** The digest as docs/cli.md defines it, computed here on its own: sorted keys, no whitespace. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
}
function digestOf(plan: Plan): string {
  const { integrity: _integrity, ...content } = plan;
  return `sha256:${createHash('sha256').update(canonical(content)).digest('hex')}`;
}

/** The same value with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(reversed);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .toReversed()
      .map(([key, item]) => [key, reversed(item)]),
  );
}

describe('the integrity digest', () => {
  it('is SHA-256 of the canonical JSON docs/cli.md defines, of all but itself, whatever the order of keys', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const plan = { ...value, integrity: 'sha256:0' } as Plan;
        expect(integrityOf(plan)).toBe(digestOf(plan));
        expect(integrityOf(reversed(plan) as Plan)).toBe(digestOf(plan));
      }),
      { numRuns: 500 },
    );
  });
});

const planPath = () => tmp().path('plan.json');
const readPlan = async () => JSON.parse(await readFile(planPath(), 'utf8')) as Plan;
/** Writes the plan back; `reseal` computes its digest again, as someone rewriting it would. */
async function writePlan(plan: Plan, { reseal }: { reseal: boolean }) {
  const written = reseal ? { ...plan, integrity: digestOf(plan) } : plan;
  await writeFile(planPath(), `${JSON.stringify(written, null, 2)}\n`);
}
function changeOf(plan: Plan, org: string, name: string) {
  const change = plan.orgs.find((o) => o.org === org)?.changes.find((c) => c.name === name);
  if (change === undefined) throw new Error(`the plan has no change for ${org}/${name}`);
  return change;
}

describe.each(['spec', 'kosli'] as const)('sync --plan against the %s profile', (profile) => {
  /** An emulator, the manifests, and a plan of them saved to plan.json (3 creates). */
  async function planned(): Promise<TestEmulator> {
    const api = await emulator({ profile });
    await manifests();
    const plan = await run(api.url, ['plan', '--out', 'plan.json']);
    expect(plan.code, plan.stderr).toBe(0);
    return api;
  }
  /** `sync --plan plan.json`, which must refuse with `message` and send nothing at all. */
  async function refused(api: TestEmulator, message: string) {
    const before = (await putsAndGets(api)).paths;
    const sync = await run(api.url, ['sync', '--plan', 'plan.json']);
    expect(sync.code, sync.stdout).toBe(1);
    expect(sync.stderr).toContain(message);
    expect((await putsAndGets(api)).paths).toEqual(before);
    return sync.stderr;
  }

  it('applies an untouched plan exactly, and its digest is SHA-256 of the canonical JSON of the rest', async () => {
    const api = await planned();
    const plan = await readPlan();
    expect(plan.version).toBe(6);
    expect(plan.integrity).toBe(digestOf(plan));
    const sync = await run(api.url, ['sync', '--plan', 'plan.json', '-o', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(json(sync.stdout).summary).toMatchObject({ create: 3, applied: 3, failed: 0 });
    const store = await api.getStore();
    expect(store.orgs['acme']?.map((env) => [env.name, env.description])).toEqual([
      ['production', 'Production cluster'],
      ['staging', 'Staging bucket'],
    ]);
    const again = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(again.code, again.stdout).toBe(0);
  });

  it('refuses a desired value changed while its fields stay: by the digest, and by the change itself when the digest is made again', async () => {
    const api = await planned();
    const plan = await readPlan();
    changeOf(plan, 'acme', 'staging').desired['description'] = 'Tampered';
    await writePlan(plan, { reseal: false });
    await refused(
      api,
      '--plan plan.json: cannot be used: its integrity digest does not match its content',
    );
    await writePlan(plan, { reseal: true });
    const stderr = await refused(
      api,
      'refusing to apply plan.json: a change in it does not send what its fields show',
    );
    expect(stderr).toContain(
      'org "acme", environment "staging": description: the change sends "Tampered", but its fields show "Staging bucket"',
    );
    expect(stderr).toContain('Nothing was sent.');
    expect((await api.getStore()).orgs).toEqual({});
  });

  it('refuses a field the change does not show but would send, when it differs from the manifests', async () => {
    const api = await emulator({ profile });
    await manifests();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await tmp().write('manifests/acme.yaml', ACME.replace('Staging bucket', 'Staging, v2'));
    expect((await run(api.url, ['plan', '--out', 'plan.json'])).code).toBe(0);
    const plan = await readPlan();
    const staging = changeOf(plan, 'acme', 'staging');
    expect(Object.keys(staging.fields)).toEqual(['description']);
    staging.desired['type'] = 'K8S';
    await writePlan(plan, { reseal: true });
    await refused(
      api,
      'org "acme", environment "staging": type: the plan sends "K8S", the manifests declare "S3"',
    );
    expect((await api.getStore()).orgs['acme']?.find((e) => e.name === 'staging')?.type).toBe('S3');
  });

  it('refuses a plan naming an org or an environment the manifests do not declare, or values they no longer declare', async () => {
    const api = await planned();
    // An org added to the file by someone who made its digest again.
    const plan = await readPlan();
    const beta = plan.orgs.find((o) => o.org === 'beta');
    await writePlan(
      { ...plan, orgs: [...plan.orgs, { ...beta, org: 'gamma' } as Plan['orgs'][0]] },
      { reseal: true },
    );
    await refused(api, 'org "gamma": no manifest declares this org');
    await writePlan(plan, { reseal: false });
    // The manifests the plan is applied with lost an org, then an environment.
    await rm(tmp().path('manifests/beta.yaml'));
    const stderr = await refused(
      api,
      `refusing to apply plan.json: it does not match the manifests in ${tmp().path('manifests')}`,
    );
    expect(stderr).toContain('org "beta": no manifest declares this org');
    await manifests();
    await tmp().write('manifests/acme.yaml', ACME.slice(0, ACME.indexOf('  - name: staging')));
    await refused(
      api,
      'org "acme", environment "staging": the plan creates it, but no manifest declares it',
    );
    // Edited after the review: the plan is not what these manifests say.
    await tmp().write('manifests/acme.yaml', ACME.replace('Production cluster', 'Edited'));
    await refused(
      api,
      'org "acme", environment "production": description: the plan sends "Production cluster", the manifests declare "Edited"',
    );
    expect((await api.getStore()).orgs).toEqual({});
  });

  it('refuses an edited digest, a file without one, another version and a cut file', async () => {
    const api = await planned();
    const plan = await readPlan();
    const digest = plan.integrity ?? '';
    const edited = `${digest.slice(0, -1)}${digest.endsWith('0') ? '1' : '0'}`;
    await writePlan({ ...plan, integrity: edited }, { reseal: false });
    await refused(api, `its integrity digest does not match its content (the file says ${edited}`);
    const { integrity: _integrity, ...bare } = plan;
    await writePlan(bare, { reseal: false });
    await refused(
      api,
      'it has no integrity digest, and a plan that is not sealed cannot be trusted',
    );
    // One format: a plan of any other version is made again.
    for (const version of [5, 7]) {
      await writePlan({ ...plan, version }, { reseal: true });
      await refused(
        api,
        `--plan plan.json: cannot be used: it has version ${version}, and this envsync reads only version 6; make the plan again with "envsync plan --out plan.json" and review it`,
      );
    }
    const text = `${JSON.stringify(plan, null, 2)}\n`;
    await writeFile(planPath(), text.slice(0, Math.floor(text.length / 2)));
    await refused(api, '--plan plan.json: cannot be used: it is not whole JSON');
    expect((await api.getStore()).orgs).toEqual({});
  });
});
