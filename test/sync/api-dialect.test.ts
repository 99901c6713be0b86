/** `--api-dialect contract|kosli|auto`: read from the first listing under auto, said and shown. */
import { describe, expect, it } from 'vitest';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const MANIFEST = 'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: Web\n';

describe('--api-dialect', () => {
  it.each([
    ['spec', 'contract', 'an {"env": [...]} object'],
    ['kosli', 'kosli', 'a bare array'],
  ] as const)(
    'auto reads the %s profile as %s, logs it once and shows it in every format',
    async (profile, dialect, shape) => {
      const api = await world.emulator({ profile });
      await tmp().write('manifests/acme.yaml', MANIFEST);
      const plan = await run(api.url, ['plan', '-o', 'json', '--log-level', 'info']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(json(plan.stdout)).toMatchObject({ dialect: { dialect, from: 'listing' } });
      const said = plan.stderr.split('\n').filter((line) => line.includes('API dialect'));
      expect(said.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
        `API dialect ${dialect} (auto: the listing is ${shape})`,
      ]);
      const text = await run(api.url, ['plan']);
      expect(text.stdout).toContain(
        `API dialect: ${dialect} (auto: read from the listing's shape)`,
      );
      const markdown = await run(api.url, ['plan', '-o', 'markdown']);
      expect(markdown.stdout).toContain(
        `API dialect: ${dialect} (auto: read from the listing's shape).`,
      );
    },
  );

  it('a dialect named by flag or environment wins, and a listing of the other shape is warned about', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await tmp().write('manifests/acme.yaml', MANIFEST);
    const flag = await run(api.url, ['plan', '-o', 'json', '--api-dialect', 'contract']);
    expect(json(flag.stdout)).toMatchObject({ dialect: { dialect: 'contract', from: 'setting' } });
    expect(flag.stderr).toContain(
      "API dialect contract (--api-dialect, although the listing is a bare array, which is kosli's shape)",
    );
    const env = await run(api.url, ['plan', '-o', 'json'], [], { ENVSYNC_API_DIALECT: 'kosli' });
    expect(json(env.stdout)).toMatchObject({ dialect: { dialect: 'kosli', from: 'setting' } });
    expect(env.stderr).not.toContain('although');
  });

  it('refuses a dialect it does not know, naming the choices', async () => {
    const api = await world.emulator();
    await tmp().write('manifests/acme.yaml', MANIFEST);
    const bad = await run(api.url, ['plan', '--api-dialect', 'prod']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--api-dialect: "prod".*auto.*contract.*kosli/);
  });
});

describe('what the contract dialect cannot do', () => {
  const ACME = `org: acme
prune: true
environments:
  - name: web-2
    type: K8S
    description: d
    renamed_from: web
    tags:
      team: web
`;
  it.each([
    ['named by --api-dialect', 'kosli', ['--api-dialect', 'contract'], 'set by --api-dialect', []],
    [
      'read from the listing',
      'spec',
      [],
      "auto: read from the listing's shape",
      ['GET /api/v2/environments/acme', 'GET /api/v2/environments/gamma'],
    ],
  ] as const)(
    '%s: prune, renamed_from, policy documents and tags are refused at their places; nothing is sent to the org, the others go on',
    async (_how, profile, flags, how, asked) => {
      const api = await world.emulator({ profile, orgs: ['acme', 'beta', 'gamma'] });
      await tmp().write('manifests/acme.yaml', ACME);
      await tmp().write(
        'manifests/gamma.yaml',
        'org: gamma\npolicies:\n  - name: rules\n    file: rules.yaml\nenvironments: []\n',
      );
      await tmp().write('manifests/rules.yaml', 'rules: []\n');
      await tmp().write('manifests/beta.yaml', MANIFEST.replace('acme', 'beta'));
      const sync = await run(api.url, ['sync', '-o', 'json', ...flags]);
      expect(sync.code).toBe(1);
      const report = json(sync.stdout);
      const errors = report.orgs.flatMap((o) =>
        o.errors.map((e) => [o.org, o.status, e.line, e.column, e.path]),
      );
      expect(errors).toEqual([
        ['acme', 'invalid', 8, 5, 'environments[0].tags'],
        ['acme', 'invalid', 2, 1, 'prune'],
        ['acme', 'invalid', 7, 5, 'environments[0].renamed_from'],
        ['gamma', 'invalid', 3, 5, 'policies[0]'],
      ]);
      for (const { message } of report.orgs.flatMap((o) => o.errors))
        expect(message).toContain(`contract (${how})`);
      expect(report.orgs.find((o) => o.org === 'beta')?.status).toBe('ok');
      const sent = (await putsAndGets(api)).paths;
      expect(sent.filter((r) => /acme|gamma/.test(r))).toEqual(asked);
      expect(sent).toContain('PUT /api/v2/environments/beta');
      const text = await run(api.url, ['plan', ...flags]);
      expect(text.stdout).toContain(
        `manifests/acme.yaml:8:5 environments[0].tags: "tags" cannot be sent in the API dialect contract (${how}), which has no operation for it: ` +
          'it needs the kosli dialect (--api-dialect kosli, or auto against a service whose listing has that shape). ' +
          'Remove the key or change the dialect; nothing is sent to this org',
      );
    },
  );
});
