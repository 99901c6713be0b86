/** Policy document uploads in saved plans, and the comment each upload carries. */
import { readFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { putsAndGets, reseal, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const POLICY = '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts: {}\n';
const MANIFEST = (description = 'What production needs') => `org: acme
policies:
  - name: prod-requirements
    description: ${JSON.stringify(description)}
    file: policies/prod-requirements.yaml
environments:
  - name: production
    type: K8S
    description: Production
    policies: [prod-requirements]
`;

async function write(manifest = MANIFEST(), policy = POLICY, root = 'manifests'): Promise<void> {
  await tmp().write(`${root}/acme.yaml`, manifest);
  await tmp().write(`${root}/policies/prod-requirements.yaml`, policy);
}

type SavedPlan = {
  version: number;
  integrity: string;
  orgs: {
    policyDocuments?: {
      digest: string;
      changes: { name: string; content: string; fields: Record<string, unknown> }[];
    };
  }[];
} & Record<string, unknown>;

const readPlan = async () =>
  JSON.parse(await readFile(tmp().path('plan.json'), 'utf8')) as SavedPlan;

describe('saved plans carry policy document uploads', () => {
  /** A kosli emulator and a plan of the manifests saved to plan.json. */
  async function planned(): Promise<TestEmulator> {
    const api = await world.emulator({ profile: 'kosli', policyDocuments: {} });
    await write();
    const plan = await run(api.url, ['plan', '--out', 'plan.json']);
    expect(plan.code, plan.stderr).toBe(0);
    return api;
  }
  /** `sync --plan plan.json` refuses with `message` and sends nothing. */
  async function expectRefused(api: TestEmulator, message: string): Promise<void> {
    const before = (await putsAndGets(api)).paths.length;
    const sync = await run(api.url, ['sync', '--plan', 'plan.json']);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain(message);
    const sent = await putsAndGets(api, before);
    expect(sent.writes).toEqual([]);
    expect(sent.paths.length).toBeLessThanOrEqual(2);
  }

  it('holds the exact text each upload sends, and sync --plan uploads exactly that, first', async () => {
    const api = await planned();
    const plan = await readPlan();
    expect(plan.version).toBe(6);
    expect(plan.orgs[0]?.policyDocuments?.changes).toEqual([
      expect.objectContaining({ name: 'prod-requirements', content: POLICY }),
    ]);
    const sync = await run(api.url, ['sync', '--plan', 'plan.json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('+ policy document prod-requirements [applied]');
    expect((await putsAndGets(api)).paths.filter((p) => p.startsWith('PUT '))).toEqual([
      'PUT /api/v2/policies/acme',
      'PUT /api/v2/environments/acme',
    ]);
    const held = (await api.getStore()).policies?.['acme'];
    expect(held?.map((d) => [d.name, d.versions.map((v) => v.policy_yaml)])).toEqual([
      ['prod-requirements', [POLICY]],
    ]);
    expect((await run(api.url, ['plan'], ['--detailed-exitcode'])).code).toBe(0);
  });

  it('refuses, sending nothing, a plan whose upload no longer matches the files, the manifests, its digest or the service', async () => {
    const api = await planned();
    await write(MANIFEST(), POLICY.replace('{}', '{ edited: true }'));
    await expectRefused(
      api,
      'org "acme", policy document "prod-requirements": its file manifests/policies/prod-requirements.yaml no longer holds the text the plan uploads',
    );
    await write(MANIFEST('Edited'));
    await expectRefused(
      api,
      'org "acme", policy document "prod-requirements": description: the plan sends "What production needs", the manifests declare "Edited"',
    );
    await write();
    const original = await readFile(tmp().path('plan.json'), 'utf8');
    await reseal(tmp().path('plan.json'), (plan: SavedPlan) => {
      const upload = plan.orgs[0]?.policyDocuments?.changes[0];
      if (upload !== undefined) upload.content = 'tampered: true\n';
    });
    await expectRefused(
      api,
      'policy document "prod-requirements": the upload\'s text does not hash to the digest its fields show',
    );
    await writeFile(tmp().path('plan.json'), original);
    const moved = [{ name: 'prod-requirements', versions: [{ policy_yaml: 'other: 1\n' }] }];
    await api.putStore({ ...(await api.getStore()), policies: { acme: moved } });
    await expectRefused(api, 'org acme: its policy documents changed on the service');
  });
});

describe('the comment of an upload', () => {
  /**
   * A small service in production's shapes that keeps the multipart bodies it is sent, and lists
   * the documents they made (so the uploads verify).
   */
  async function recordingService() {
    const payloads: unknown[] = [];
    const documents = new Map<string, { description: string; policy_yaml: string }>();
    const fake = await startFakeApi((req, res) => {
      const reply = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const policies = req.url === '/api/v2/policies/acme';
      if (policies && req.method === 'PUT') {
        // Read by the platform's form parser.
        const headers = { 'content-type': String(req.headers['content-type']) };
        void new Response(req.body, { headers }).formData().then(async (form) => {
          const [payload, file] = [form.get('payload'), form.get('policy_file')];
          if (typeof payload !== 'string' || file === null) throw new Error('a bad upload');
          const { name, description } = JSON.parse(payload) as Record<string, string>;
          payloads.push(JSON.parse(payload));
          const text = typeof file === 'string' ? file : await file.text();
          documents.set(String(name), { description: description ?? '', policy_yaml: text });
          reply(201, {});
        });
      } else if (policies) {
        const listed = [...documents].map(([name, doc]) => ({
          name,
          description: doc.description,
          created_at: 1,
          versions: [{ version: 1, policy_yaml: doc.policy_yaml, timestamp: 1, created_by: 'x' }],
        }));
        reply(200, listed);
      } else if (req.method === 'PUT') reply(201, 'OK');
      else reply(200, []);
    });
    return { ...fake, payloads, forget: () => documents.clear() };
  }

  it('names the git revision of a git-sync worktree, else says envsync', async () => {
    const fake = await recordingService();
    try {
      // git-sync publishes <root>/<link> -> .worktrees/<commit>.
      const commit = '3f2a9c1d5e7b8a6f4c2d0e1f3a5b7c9d1e3f5a7b';
      // Only the document: this service keeps no environments to verify.
      const onlyDocument = MANIFEST().replace(/environments:[^]*$/, 'environments: []\n');
      await write(onlyDocument, POLICY, `git/.worktrees/${commit}/manifests`);
      await symlink(`.worktrees/${commit}`, tmp().path('git/repo'));
      const synced = await run(
        fake.url,
        ['sync'],
        ['--manifests', tmp().path('git/repo/manifests')],
      );
      expect(synced.code, synced.stderr).toBe(0);
      // A plain folder: no revision to name (the service has forgotten the first upload).
      fake.forget();
      await mkdir(tmp().path('manifests'), { recursive: true });
      await write(onlyDocument);
      expect((await run(fake.url, ['sync'])).code).toBe(0);
      expect(fake.payloads).toEqual([
        {
          name: 'prod-requirements',
          description: 'What production needs',
          type: 'env',
          comment: `envsync: git revision ${commit}`,
        },
        {
          name: 'prod-requirements',
          description: 'What production needs',
          type: 'env',
          comment: 'envsync',
        },
      ]);
    } finally {
      await fake.close();
    }
  });
});
