import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';

/**
 * The CLI's rough edges for daily use: the CLI's `main` in this process, given the arguments,
 * environment, directory and output streams; the first refusal of an --org also in a real child
 * process, for its exit code and stdio.
 */

const ACME = `org: acme
environments:
  - name: dev
    type: K8S
    description: d
`;

let dir: string;
let api: TestEmulator;
const TOKEN = 'daily-cli-token';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'envsync-daily-cli-'));
  await mkdir(path.join(dir, 'manifests'));
  await writeFile(path.join(dir, 'manifests', 'acme.yaml'), ACME);
  await writeFile(path.join(dir, 'manifests', 'globex.yaml'), ACME.replace('acme', 'globex'));
  // Only acme exists in this service: any other org is answered 404.
  api = await startTestEmulator({ orgs: ['acme'], tokens: [{ token: TOKEN, orgs: null }] });
});
afterAll(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

describe('--org that names nothing', () => {
  it('is an error (exit 1) with a did-you-mean for validate, plan and sync, before any request', async () => {
    for (const [command, cli] of [
      ['validate', envsync],
      ['plan', envsyncInProcess],
      ['sync', envsyncInProcess],
    ] as const) {
      const result = await cli(
        [command, '--manifests', 'manifests', '--org', 'acmee', '--api-url', api.url],
        { cwd: dir, env: { ENVSYNC_TOKEN: TOKEN } },
      );
      expect(result, command).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr, command).toContain(
        `envsync ${command}: --org acmee: no manifest declares this org (did you mean "acme"?); the manifests declare acme, globex`,
      );
    }
    // Refused before the service was asked anything.
    expect(await api.getRequests(100)).toEqual([]);
  });

  it('also shows the problems of files too broken to say which org they declare', async () => {
    await writeFile(path.join(dir, 'broken.yaml'), 'org: [acme\nenvironments: x\n');
    const result = await envsyncInProcess(
      ['validate', 'manifests', 'broken.yaml', '--org', 'zeta'],
      {
        cwd: dir,
      },
    );
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('--org zeta: no manifest declares this org;');
    expect(result.stderr).toMatch(/^ {2}broken\.yaml:2:1 YAML syntax: /m);
  });

  it('an org the manifests do declare is fine', async () => {
    const result = await envsyncInProcess(
      ['validate', '--manifests', 'manifests', '--org', 'globex'],
      {
        cwd: dir,
      },
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });

  it('for export, an org the service does not know is an error that says to check the name', async () => {
    const result = await envsyncInProcess(
      ['export', '--api-url', api.url, '--org', 'acme', '--org', 'acmee'],
      {
        cwd: dir,
        env: { ENVSYNC_TOKEN: TOKEN },
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('org: acme\n');
    expect(result.stderr).toContain('envsync export: org acmee:');
    expect(result.stderr).toContain(
      'the service knows no organization "acmee": check the name given to --org',
    );
  });
});

describe('-o with a file name', () => {
  it('is a usage error that asks "did you mean --out?"', async () => {
    for (const value of ['plan.json', 'out.md', 'reports/plan']) {
      const result = await envsyncInProcess(['plan', '--manifests', 'manifests', '-o', value], {
        cwd: dir,
      });
      expect(result, value).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr, value).toContain(`did you mean --out ${value}?`);
    }
    // A format is still a format.
    const json = await envsyncInProcess(['validate', '--manifests', 'manifests', '-o', 'json'], {
      cwd: dir,
    });
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { orgs: unknown[] }).orgs).toHaveLength(2);
  });
});

describe('config file errors', () => {
  it('name the file, line, column and key, with a did-you-mean for an unknown key', async () => {
    await writeFile(
      path.join(dir, 'envsync.yaml'),
      'manifests: manifests\nconcurency: 3\ntimeout: 30\n',
    );
    const result = await envsyncInProcess(['validate', '--config', 'envsync.yaml'], { cwd: dir });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    const file = path.join(dir, 'envsync.yaml');
    expect(result.stderr).toBe(
      `envsync validate: config file ${file}:2:1 concurency: unknown key (did you mean "concurrency"?); the keys are listed in config/envsync.example.yaml\n` +
        `config file ${file}:3:10 timeout: 30 is not a duration (use e.g. 500ms, 30s, 5m)\n`,
    );
  });
});
