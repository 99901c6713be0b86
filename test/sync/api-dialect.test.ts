/**
 * `--api-dialect contract|kosli|auto`: which API a run talks to, read from the first listing's
 * shape under `auto`, said once in the log and shown in the plan (text, markdown, JSON).
 */
import { describe, expect, it } from 'vitest';
import { json, syncWorld } from '../helpers/sync-world.ts';

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
      const said = plan.stderr
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { msg: string }).msg)
        .filter((msg) => msg.includes('API dialect'));
      expect(said).toEqual([`API dialect ${dialect} (auto: the listing is ${shape})`]);
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
