import { describe, expect, it } from 'vitest';
import { startFakeApi } from '../helpers/fake-api.ts';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const { tmp, emulator, manifests, run } = syncWorld();

describe('output and exit codes', () => {
  it('prints a terraform-like text plan and a markdown plan', async () => {
    const api = await emulator();
    await manifests();
    const text = await run(api.url, ['plan']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('org acme');
    expect(text.stdout).toContain('+ create production');
    expect(text.stdout).toContain('policies    = ["baseline","pci"]');
    expect(text.stdout).not.toContain('\u001b['); // not a TTY: no colour
    const md = await run(api.url, ['plan'], ['--output', 'markdown']);
    expect(md.stdout).toContain(
      '| org | status | create | update | rename | archive | unverified | unchanged | unmanaged | errors |',
    );
    expect(md.stdout).toContain('| acme | ✅ ok | 2 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |');
    expect(md.stdout).toContain('<details open><summary><b>acme</b>: 2 changes</summary>');
  });

  it('sync --dry-run is plan: it never writes', async () => {
    const api = await emulator();
    await manifests();
    const dry = await run(api.url, ['sync', '--dry-run'], ['--detailed-exitcode', '-o', 'json']);
    expect(dry.code).toBe(2);
    expect(json(dry.stdout).dryRun).toBe(true);
    expect((await putsAndGets(api)).puts).toBe(0);
  });

  it('validate needs no token and no network', async () => {
    await manifests();
    const result = await envsync(['validate', '--manifests', tmp().path('manifests')], {
      cwd: tmp().dir,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('valid: 2 file(s), 2 org(s), 3 environment(s)\n');
  });

  it('refuses to run without an API address or a token, and refuses plain http to a remote host', async () => {
    await manifests();
    for (const [args, env, said] of [
      [[], { ENVSYNC_TOKEN: TOKEN }, 'no API address'],
      [['--api-url', 'http://127.0.0.1:9'], {}, 'no API token'],
      [['--api-url', 'http://api.example.com'], { ENVSYNC_TOKEN: TOKEN }, 'clear text'],
    ] as const) {
      const result = await envsyncInProcess(['plan', '--manifests', 'manifests', ...args], {
        cwd: tmp().dir,
        env,
      });
      expect(result.code, said).toBe(1);
      expect(result.stderr).toContain(said);
    }
  });
});

describe('a refused token stops the org', () => {
  it('after a 403 on a PUT, the changes still waiting are not sent', async () => {
    const fake = await startFakeApi((req, res) => {
      if (req.method === 'GET')
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      else
        res
          .writeHead(403, { 'content-type': 'application/json' })
          .end('{"message": "You don\'t have permission to access this resource"}');
    });
    const many = `org: acme\nenvironments:\n${Array.from({ length: 30 }, (_, i) => `  - name: env-${i}\n    type: K8S\n    description: d${i}\n`).join('')}`;
    await manifests({ 'acme.yaml': many });
    const sync = await run(fake.url, ['sync'], ['--concurrency', '2', '-o', 'json']);
    await fake.close();
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.summary).toMatchObject({ create: 30, failed: 30, applied: 0 });
    expect(
      report.orgs[0]?.changes.filter((c) => c.error?.startsWith('not sent: the token was refused'))
        .length,
    ).toBeGreaterThanOrEqual(27);
    expect(fake.requests.filter((r) => r.method === 'PUT').length).toBeLessThanOrEqual(3);
  });
});
