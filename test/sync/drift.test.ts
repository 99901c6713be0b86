/** Drift named as drift by the one-shot commands, in both profiles of the emulator. */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { editByHand } from '../helpers/emulator.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const manifest = (prod: string) => `org: acme
environments:
  - {name: prod, type: K8S, description: ${JSON.stringify(prod)}, policies: [pci]}
  - {name: web, type: S3, description: Web assets}
`;

describe.each(['spec', 'kosli'] as const)('drift against the %s profile', (profile) => {
  it('plan names drift as drift in JSON, text, markdown and the step summary; sync heals it; a manifest change is a change', async () => {
    const api = await world.emulator({ profile });
    await tmp().write('manifests/acme.yaml', manifest('Production'));
    const outputs: string[] = [];
    const cli = async (...argv: string[]) => {
      const result = await run(api.url, argv, [], {
        GITHUB_STEP_SUMMARY: tmp().path('summary.md'),
      });
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    // Created by envsync: a create is never drift.
    const created = json((await cli('sync', '-o', 'json')).stdout);
    expect(created.orgs[0]?.changes.map((c) => [c.name, c.action, c.cause])).toEqual([
      ['prod', 'create', 'change'],
      ['web', 'create', 'change'],
    ]);
    expect(created.summary).toMatchObject({ applied: 2, drift: 0, driftHealed: 0 });

    // Someone edits prod at the service.
    await editByHand(api, 'acme', 'prod', 'edited <by> hand');
    const plan = json((await cli('plan', '-o', 'json')).stdout);
    expect(plan.orgs[0]?.changes).toEqual([
      {
        action: 'update',
        cause: 'drift',
        name: 'prod',
        fields: { description: { from: 'edited <by> hand', to: 'Production' } },
        ...(profile === 'kosli' ? { patch: ['description'] } : {}),
        result: 'planned',
      },
    ]);
    expect(plan.summary).toMatchObject({ update: 1, drift: 1, driftHealed: 0 });
    const text = (await cli('plan')).stdout;
    expect(text).toContain(
      '~ update prod (drift: changed on the service, not in the manifests)\n' +
        `      description : "edited <by> hand" -> "Production"${profile === 'kosli' ? ' (PATCH)' : ''}\n`,
    );
    expect(text).toContain('Plan: 0 to create, 1 to update (1 drift), 0 unverified, 1 unchanged');
    const markdown = (await cli('plan', '-o', 'markdown')).stdout;
    expect(markdown).toContain('**1** to update (**1** drift)');
    expect(markdown).toContain('| ✏️ update (drift) | prod |');
    // The step summary holds the same markdown, whatever the output format.
    const summary = await readFile(tmp().path('summary.md'), 'utf8');
    expect(summary).toContain(
      `| ✏️ update (drift) | prod | description: <code>"edited &lt;by&gt; hand"</code> → <code>"Production"</code>${profile === 'kosli' ? ' (PATCH)' : ''} |`,
    );

    // A saved plan keeps the cause.
    expect((await cli('plan', '--out', 'plan.json')).code).toBe(0);
    const saved = JSON.parse(await readFile(tmp().path('plan.json'), 'utf8')) as {
      orgs: { changes: { name: string; cause: string }[] }[];
    };
    expect(saved.orgs[0]?.changes.map((c) => [c.name, c.cause])).toEqual([['prod', 'drift']]);

    // sync sets it back and says so, from the saved plan as well as without one.
    const reviewed = json((await cli('sync', '--plan', 'plan.json', '-o', 'json')).stdout);
    expect(reviewed.orgs[0]?.changes.map((c) => [c.name, c.cause, c.result])).toEqual([
      ['prod', 'drift', 'applied'],
    ]);
    expect(reviewed.summary).toMatchObject({ drift: 1, driftHealed: 1 });
    await editByHand(api, 'acme', 'prod', 'edited <by> hand');
    const healed = await cli('sync');
    expect(healed.code, healed.stdout + healed.stderr).toBe(0);
    expect(healed.stdout).toContain(
      '~ update prod (drift: changed on the service, not in the manifests) [applied]\n',
    );
    expect(healed.stdout).toContain('Sync: 1 applied (1 drift healed), 0 failed');
    expect(json((await cli('plan', '-o', 'json')).stdout).orgs[0]?.changes).toEqual([]);

    // The manifest changes: a change, not drift; sync applies it as such.
    await tmp().write('manifests/acme.yaml', manifest('Production, v2'));
    const changed = json((await cli('sync', '-o', 'json')).stdout);
    expect(changed.orgs[0]?.changes.map((c) => [c.name, c.cause, c.result])).toEqual([
      ['prod', 'change', 'applied'],
    ]);
    expect(changed.summary).toMatchObject({ applied: 1, drift: 0, driftHealed: 0 });

    // Drift again after that change: drift, from the manifest as last applied.
    await editByHand(api, 'acme', 'prod', 'edited again');
    const again = json((await cli('plan', '-o', 'json')).stdout);
    expect(again.orgs[0]?.changes.map((c) => [c.name, c.cause])).toEqual([['prod', 'drift']]);
    // Both changed: the service and the manifest. A change.
    await tmp().write('manifests/acme.yaml', manifest('Production, v3'));
    const both = json((await cli('plan', '-o', 'json')).stdout);
    expect(both.orgs[0]?.changes.map((c) => [c.name, c.cause])).toEqual([['prod', 'change']]);

    for (const output of outputs) expect(output).not.toContain(TOKEN);
  });

  it('a record without its fingerprint makes drift a change; a sync that finds the service as declared records it, and drift is drift again', async () => {
    const api = await world.emulator({ profile });
    await tmp().write('manifests/acme.yaml', manifest('Production'));
    expect((await run(api.url, ['sync'])).code).toBe(0);
    // As a crash between a PUT that landed and the records leaves them: without fingerprints.
    const file = tmp().path('state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as {
      orgs: Record<string, Record<string, unknown>[]>;
    };
    for (const group of state.orgs['acme'] ?? []) delete group['fingerprints'];
    await writeFile(file, JSON.stringify(state));
    const causes = async () =>
      json((await run(api.url, ['plan', '-o', 'json'])).stdout).orgs[0]?.changes.map((c) => [
        c.name,
        c.cause,
      ]);

    // What envsync last applied is in doubt: a hand edit is a change.
    await editByHand(api, 'acme', 'prod', 'edited by hand');
    expect(await causes()).toEqual([['prod', 'change']]);
    // The service as declared again: a plan finds nothing to do and writes nothing; a sync sends
    // nothing either, and records that the service holds what is declared.
    await editByHand(api, 'acme', 'prod', 'Production');
    const inDoubt = await readFile(file, 'utf8');
    expect(await causes()).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe(inDoubt);
    const before = (await putsAndGets(api)).writes;
    const synced = json((await run(api.url, ['sync', '-o', 'json'])).stdout);
    expect(synced.summary).toMatchObject({ applied: 0, unchanged: 2 });
    expect((await putsAndGets(api)).writes).toEqual(before);
    const recorded = JSON.parse(await readFile(file, 'utf8')) as {
      orgs: Record<string, { fingerprints?: (number | null)[] }[]>;
    };
    const fingerprints = (recorded.orgs['acme'] ?? []).flatMap((g) => g.fingerprints ?? []);
    expect(fingerprints.map((f) => typeof f)).toEqual(['number', 'number']);

    // The next hand edit is drift, in the plan and in the sync that sets it back.
    await editByHand(api, 'acme', 'prod', 'edited by hand, again');
    expect(await causes()).toEqual([['prod', 'drift']]);
    const healed = json((await run(api.url, ['sync', '-o', 'json'])).stdout);
    expect(healed.summary).toMatchObject({ applied: 1, drift: 1, driftHealed: 1 });
  });
});
