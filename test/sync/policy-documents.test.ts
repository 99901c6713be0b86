/** Policy documents as code, against the emulator's kosli profile. */
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.ts';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const POLICY = `_schema: https://kosli.com/schemas/policy/environment/v1
artifacts:
  provenance:
    required: true
`;

/** A manifest declaring the policy document prod-requirements and an environment attaching it. */
const MANIFEST = (description = 'What production needs', attach = 'prod-requirements') => `org: acme
policies:
  - name: prod-requirements
    description: ${JSON.stringify(description)}
    file: policies/prod-requirements.yaml
environments:
  - name: production
    type: K8S
    description: Production
    policies: [${attach}]
`;

async function kosli(): Promise<TestEmulator> {
  return world.emulator({ profile: 'kosli', policyDocuments: {} });
}

async function write(manifest = MANIFEST(), policy = POLICY): Promise<void> {
  await tmp().write('manifests/acme.yaml', manifest);
  await tmp().write('manifests/policies/prod-requirements.yaml', policy);
}

/** The org's policy documents as the emulator holds them: name, description, version texts. */
async function held(api: TestEmulator) {
  return ((await api.getStore()).policies?.['acme'] ?? []).map((doc) => ({
    name: doc.name,
    description: doc.description,
    versions: doc.versions.map((v) => v.policy_yaml),
  }));
}

const writes = async (api: TestEmulator) =>
  (await putsAndGets(api)).paths.filter((p) => p.startsWith('PUT '));

describe('policy documents (kosli profile)', () => {
  it('creates a document before the environment that attaches it, shown in every format', async () => {
    const api = await kosli();
    await write();
    const plan = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain('+ policy document prod-requirements\n');
    expect(plan.stdout).toContain('description = "What production needs"');
    expect(plan.stdout).toContain('Policy documents: 1 to create, 0 to update.');
    const markdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(markdown.stdout).toContain('| ➕ create | prod-requirements |');
    const planned = json((await run(api.url, ['plan', '-o', 'json'])).stdout);
    expect(planned.orgs[0]?.policyDocuments).toEqual([
      {
        action: 'create',
        name: 'prod-requirements',
        version: null,
        fields: {
          content: { from: null, to: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
          description: { from: null, to: 'What production needs' },
        },
        result: 'planned',
      },
    ]);
    expect(await writes(api)).toEqual([]);

    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    const summary = { create: 1, update: 0, applied: 1, failed: 0 };
    expect(json(sync.stdout).summary['policyDocuments']).toEqual(summary);
    expect(await held(api)).toEqual([
      { name: 'prod-requirements', description: 'What production needs', versions: [POLICY] },
    ]);
    // The document first, then the environment that attaches it.
    expect(await writes(api)).toEqual([
      'PUT /api/v2/policies/acme',
      'PUT /api/v2/environments/acme',
    ]);
    expect((await api.getStore()).orgs['acme']?.[0]?.policies).toEqual(['prod-requirements']);
  });

  it('makes no version while the text is the same (trailing newlines aside), one when it changes, none for a description', async () => {
    const api = await kosli();
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const clean = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).toContain('= 1 policy document unchanged');
    // Only the trailing newlines differ: nothing to send.
    await write(MANIFEST(), `${POLICY}\n\n`);
    expect((await run(api.url, ['plan'], ['--detailed-exitcode'])).code).toBe(0);
    await write(MANIFEST(), POLICY.trimEnd());
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect((await held(api))[0]?.versions).toEqual([POLICY]);

    const changed = POLICY.replace('required: true', 'required: false');
    await write(MANIFEST(), changed);
    const plan = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('~ policy document prod-requirements (content)');
    expect(plan.stdout).toMatch(/content {5}: version 1 sha256:[0-9a-f]{12}… -> sha256:/);
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect((await held(api))[0]?.versions).toEqual([POLICY, changed]);
    expect((await run(api.url, ['plan'], ['--detailed-exitcode'])).code).toBe(0);

    // A changed description updates the document without a version.
    await write(MANIFEST('Stricter'), `${changed}\n`);
    const described = json((await run(api.url, ['plan', '-o', 'json'])).stdout);
    expect(described.orgs[0]?.policyDocuments?.[0]).toMatchObject({
      action: 'update',
      version: 2,
      fields: { description: { from: 'What production needs', to: 'Stricter' } },
    });
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect(await held(api)).toEqual([
      { name: 'prod-requirements', description: 'Stricter', versions: [POLICY, changed] },
    ]);
  });

  it('an environment attaching a policy no one has fails its org at the name, and nothing is written', async () => {
    const api = await kosli();
    await write(MANIFEST('x', 'prod-requirements, pci'));
    await tmp().write(
      'manifests/beta.yaml',
      'org: beta\nenvironments: [{name: web, type: K8S, description: W}]\n',
    );
    const plan = await run(api.url, ['sync', '-o', 'json']);
    expect(plan.code).toBe(1);
    const acme = json(plan.stdout).orgs.find((o) => o.org === 'acme');
    expect(acme?.status).toBe('invalid');
    expect(acme?.errors).toEqual([
      {
        file: 'manifests/acme.yaml',
        line: 10,
        column: 35,
        path: 'environments[0].policies[1]',
        message:
          'policy "pci" attached to "production" has no policy document in org "acme": neither the manifests (top-level policies:) nor the service have it',
      },
    ]);
    // The other org goes ahead; acme is only read.
    const requests = (await putsAndGets(api)).paths;
    expect(requests.filter((p) => p.includes('/acme'))).toEqual([
      'GET /api/v2/environments/acme',
      'GET /api/v2/policies/acme',
    ]);
    expect(requests).toContain('PUT /api/v2/environments/beta');
  });

  it('a policy attached that only the service has is fine; one only the manifests had is not managed when removed', async () => {
    const api = await kosli();
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    // Removed from the manifests, with its file: left on the service, said so, no error.
    await rm(tmp().path('manifests/policies/prod-requirements.yaml'));
    await tmp().write(
      'manifests/acme.yaml',
      MANIFEST().replace(/policies:\n[^]*environments/, 'environments'),
    );
    const plan = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain(
      'policy documents not managed (on the service, in no manifest; never deleted): prod-requirements',
    );
    const jsonPlan = json((await run(api.url, ['plan', '-o', 'json'])).stdout);
    expect(jsonPlan.orgs[0]?.policyDocumentsNotManaged).toEqual(['prod-requirements']);
    expect(await held(api)).toHaveLength(1);
  });

  it('a create that fails holds back the environment attaching it; the next sync sends both', async () => {
    const api = await kosli();
    // Larger than the emulator takes (1 MiB), within what envsync reads here: a 413, final.
    const huge = `${POLICY}# ${'x'.repeat(1024 * 1024)}\n`;
    await write(MANIFEST(), huge);
    await tmp().write(
      'manifests/other.yaml',
      'org: acme\nenvironments: [{name: staging, type: S3, description: S}]\n',
    );
    const sync = await run(api.url, ['sync', '-o', 'json'], ['--max-file-bytes', '2097152']);
    expect(sync.code).toBe(1);
    const acme = json(sync.stdout).orgs[0];
    expect(acme?.status).toBe('failed');
    expect(acme?.policyDocuments?.[0]).toMatchObject({ result: 'failed' });
    expect(acme?.policyDocuments?.[0]?.error).toMatch(/413/);
    expect(acme?.changes.map((c) => [c.name, c.result, c.error ?? ''])).toEqual([
      [
        'production',
        'failed',
        'not sent: it attaches policy document "prod-requirements", whose upload failed',
      ],
      ['staging', 'applied', ''],
    ]);
    expect((await api.getStore()).orgs['acme']?.map((e) => e.name)).toEqual(['staging']);
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const names = (await api.getStore()).orgs['acme']?.map((e) => e.name);
    expect(names).toEqual(['production', 'staging']);
  });
});

describe('export of policy documents', () => {
  const exportTo = (url: string, extra: string[] = []) =>
    world.cli(['export', '--org', 'acme', '--api-url', url, ...extra]);

  it('writes the manifest and each document to its file, and the round trip plans clean', async () => {
    const api = await kosli();
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const out = await exportTo(api.url, ['--out', 'exported']);
    expect(out.code, out.stderr).toBe(0);
    const manifest = await readFile(tmp().path('exported/acme.yaml'), 'utf8');
    expect(manifest).toContain(
      'policies:\n  - name: prod-requirements\n    description: What production needs\n    file: policies/acme/prod-requirements.yaml\n',
    );
    expect(
      await readFile(tmp().path('exported/policies/acme/prod-requirements.yaml'), 'utf8'),
    ).toBe(POLICY);
    const plan = await run(
      api.url,
      ['plan', '-o', 'json', '--detailed-exitcode'],
      ['--manifests', tmp().path('exported'), '--state', tmp().path('fresh-state.json')],
    );
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).orgs[0]?.policyDocumentsUnchanged).toEqual(['prod-requirements']);
    // Never over what is there without --force; with it, the same files again.
    const again = await exportTo(api.url, ['--out', 'exported']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists; pass --force to overwrite it');
    expect((await exportTo(api.url, ['--out', 'exported', '--force'])).code).toBe(0);
  });

  it('refuses to write through a symbolic link on the way to a policy file, even with --force', async () => {
    const api = await kosli();
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await mkdir(tmp().path('elsewhere'));
    await mkdir(tmp().path('exported'));
    await symlink(tmp().path('elsewhere'), tmp().path('exported/policies'));
    const out = await exportTo(api.url, ['--out', 'exported', '--force']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      'exported/policies is a symbolic link (export never writes through one)',
    );
    await expect(readFile(tmp().path('exported/acme.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('checks every file name before it writes any file, and says which policy and what to do', async () => {
    // Written in name order, the first would have been written before the second failed.
    const long = `p${'x'.repeat(299)}`;
    const api = await world.emulator({
      profile: 'kosli',
      orgs: ['acme'],
      policyDocuments: { acme: ['a-first', long, 'con', 'Prod', 'prod'] },
    });
    const out = await exportTo(api.url, ['--out', 'exported']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('nothing was written: 3 file names cannot be used');
    expect(out.stderr).toContain(
      `org acme: policy ${long.slice(0, 57)}... (policies/acme/${long.slice(0, 43)}...): the name is 305 bytes long, and a file name may have at most 255; rename the policy on the service, or export the org without --out`,
    );
    expect(out.stderr).toContain(
      'org acme: policy con (policies/acme/con.yaml): Windows keeps the name for a device',
    );
    expect(out.stderr).toContain(
      'org acme: policy prod (policies/acme/prod.yaml) and policies/acme/Prod.yaml differ only in case',
    );
    expect(await readdir(tmp().dir)).not.toContain('exported');
    // A name that fits is written whole, the temp file's name beside it fitting too.
    const fits = `p${'x'.repeat(249)}`;
    await api.putStore({
      orgs: { acme: [] },
      policies: { acme: [{ name: fits, versions: [{ policy_yaml: '# fits\n' }] }] },
    });
    const written = await exportTo(api.url, ['--out', 'exported']);
    expect(written.code, written.stderr).toBe(0);
    expect(await readdir(tmp().path('exported/policies/acme'))).toEqual([`${fits}.yaml`]);
  });

  it('to stdout names the documents in a comment and says to use --out', async () => {
    const api = await kosli();
    await write();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const out = await exportTo(api.url);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('#   "prod-requirements" (written only with --out DIR)');
    expect(out.stdout).not.toMatch(/^policies:/m);
    expect(out.stderr).toContain('exported only with --out DIR');
    // Still a manifest that plans clean: the document stays on the service, not managed.
    await rm(tmp().path('manifests/policies/prod-requirements.yaml'));
    await writeFile(tmp().path('manifests/acme.yaml'), out.stdout);
    const plan = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
  });
});
