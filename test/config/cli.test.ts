/**
 * The command line as a person meets it: usage errors, help, values that name their flag, the
 * precedence, and the rough edges of daily use. Most runs are the CLI's `main` in this process,
 * which is given the arguments, environment, directory and output streams; one run per kind of
 * answer (an unknown command, an unknown flag, a flag before the command, a command's --help, a
 * refused --org) is a real child process, for its exit code and stdio.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';

const ACME = 'org: acme\nenvironments:\n  - name: dev\n    type: K8S\n    description: d\n';
const TOKEN = 'daily-cli-token';

const tmp = await tempDir();
await tmp.write('manifests/acme.yaml', ACME);
await tmp.write('manifests/globex.yaml', ACME.replace('acme', 'globex'));
// Only acme exists in this service: any other org is answered 404.
const api = await startTestEmulator({ orgs: ['acme'], tokens: [{ token: TOKEN, orgs: null }] });
afterAll(async () => {
  await api.close();
  await tmp.cleanup();
});

/** `main` in this process, in the test's folder. */
const cli = (args: string[], env: Record<string, string> = {}) =>
  envsyncInProcess(args, { cwd: tmp.dir, env });

describe('unknown commands and flags', () => {
  it('an unknown command, an unknown flag, a flag before the command: two lines, exit 1', async () => {
    expect(await envsync(['plna'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'envsync: unknown command "plna" (did you mean "plan"?)\nRun "envsync --help" for the list of commands.\n',
    });
    expect(await envsync(['validate', '--manifest', 'm'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'envsync validate: unknown flag --manifest (did you mean --manifests?)\n' +
        'Usage: envsync validate [flags] [PATH...] ("envsync validate --help" lists the flags)\n',
    });
    const before = await envsync(['--hepl']);
    expect(before).toMatchObject({ code: 1, stdout: '' });
    expect(before.stderr).toContain('envsync: unknown flag --hepl (did you mean --help?)');
  });

  it('a flag of another command says which commands take it, before `run` would start', async () => {
    expect((await cli(['plan', '--interval', '5m'])).stderr).toBe(
      'envsync plan: --interval is not a flag of envsync plan; envsync run takes it\n' +
        'Usage: envsync plan [flags] ("envsync plan --help" lists the flags)\n',
    );
    const output = await envsyncInProcess(['run', '--output', 'json'], { endsBeforeStart: true });
    expect(output.stderr).toContain(
      '--output is not a flag of envsync run; envsync validate, plan, sync and status take it',
    );
  });

  it('--token: where the token goes instead, without repeating the value given', async () => {
    const hint =
      'there is no --token flag, so that the token stays out of shell histories and process lists: ' +
      'set ENVSYNC_TOKEN, or pass --token-file PATH (env ENVSYNC_TOKEN_FILE)';
    for (const args of [
      ['plan', '--token', 'tok-3f9a-never-shown'],
      ['sync', '--token=tok-3f9a-never-shown'],
      ['export', '--org', 'acme', '--token', 'tok-3f9a-never-shown'],
    ]) {
      const result = await cli(args);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain(`: ${hint}\n`);
      expect(result.stderr).not.toContain('tok-3f9a');
    }
    const daemon = await envsyncInProcess(['run', '--api-token', 'x'], { endsBeforeStart: true });
    expect(daemon.stderr).toContain('envsync run: there is no --api-token flag');
    // validate reads no token: the emulator's --token is the nearest there is.
    expect((await cli(['validate', '--token', 'x'])).stderr).toContain(
      '--token is not a flag of envsync validate; envsync emulator takes it',
    );
  });

  // --observe for sync: test/sync/pause.test.ts.
  it('--out and --plan only where they make sense', async () => {
    expect((await cli(['sync', '--out', 'plan.json'])).stderr).toContain('--out saves a plan');
    const plan = await cli(['sync', '--dry-run', '--plan', 'p.json']);
    expect(plan.stderr).toContain('--plan applies a saved plan');
  });
});

describe('values', () => {
  it('a bad value names the flag, whichever source gave it, and exits 1', async () => {
    // Every parser's words are the table's (test/config/table.test.ts); here, each source.
    const cases: [string[], Record<string, string>, string][] = [
      [['--annotations', 'gitlab'], {}, '--annotations: "gitlab" is not one of github, none'],
      [[], { ENVSYNC_OUTPUT: 'yaml' }, '--output: "yaml" is not one of text, json, markdown'],
      [['--timeout=-1s'], {}, '--timeout: "-1s" is not a duration (use e.g. 500ms, 30s, 5m)'],
      [[], { ENVSYNC_INSECURE_HTTP: 'yes' }, '--insecure-http: "yes" must be true or false'],
    ];
    for (const [args, env, message] of cases) {
      const result = await cli(['plan', '--manifests', 'manifests', ...args], env);
      const stderr = `envsync plan: ${message}\n`;
      expect(result, message).toMatchObject({ code: 1, stdout: '', stderr });
    }
  });

  it('-o with a file name is a usage error that asks "did you mean --out?"; a format is a format', async () => {
    for (const value of ['plan.json', 'out.md', 'reports/plan']) {
      const result = await cli(['plan', '--manifests', 'manifests', '-o', value]);
      expect(result, value).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr, value).toContain(`did you mean --out ${value}?`);
    }
    const json = await cli(['validate', '--manifests', 'manifests', '-o', 'json']);
    expect((JSON.parse(json.stdout) as { orgs: unknown[] }).orgs).toHaveLength(2);
  });

  it('flags > environment > config file > defaults, with config paths relative to the file', async () => {
    await tmp.write('conf/envsync.yaml', 'manifests: ../manifests\noutput: json\n');
    await tmp.write('one/acme.yaml', ACME);
    const run = (args: string[], env: Record<string, string> = {}) =>
      cli(['validate', '--config', 'conf/envsync.yaml', ...args], env);
    expect(JSON.parse((await run([])).stdout)).toMatchObject({ summary: { files: 2, orgs: 2 } });
    const env = await run([], { ENVSYNC_MANIFESTS: 'one', ENVSYNC_OUTPUT: 'text' });
    expect(env.stdout).toBe('valid: 1 file(s), 1 org(s), 1 environment(s)\n');
    const flags = await run(['--manifests', 'manifests', '-o', 'markdown'], {
      ENVSYNC_MANIFESTS: 'one',
    });
    expect(flags.stdout).toMatch(/^### envsync validate\n[^]*valid: 2 file\(s\), 2 org\(s\)/);
  });

  it('a config file with problems: file, line, column and key for each, with a did-you-mean', async () => {
    await tmp.write('bad.yaml', 'manifests: manifests\nconcurency: 3\ntimeout: 30\n');
    const file = tmp.path('bad.yaml');
    expect(await cli(['validate', '--config', 'bad.yaml'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        `envsync validate: config file ${file}:2:1 concurency: unknown key (did you mean "concurrency"?); the keys are listed in config/envsync.example.yaml\n` +
        `config file ${file}:3:10 timeout: 30 is not a duration (use e.g. 500ms, 30s, 5m)\n`,
    });
  });
});

describe('help', () => {
  it('envsync plan --help: its flags by group, an example, exit 0, nothing on stderr', async () => {
    const result = await envsync(['plan', '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: envsync plan \[flags\]\n/);
    expect(result.stdout).toMatch(/\nSaved plans:\n {2}--out FILE +save the plan/);
    expect(result.stdout).toContain('\nExamples:\n  envsync plan ');
    for (const absent of ['--dry-run', '--plan FILE', '--interval', '--force', '--port']) {
      expect(result.stdout).not.toMatch(new RegExp(`^ {2}${absent}`, 'm'));
    }
  });

  it('comes after the strict parse: a bad flag with --help is still an error', async () => {
    const result = await cli(['export', '--manifests', 'm', '--help']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--manifests is not a flag of envsync export');
  });
});

describe('--org that names nothing', () => {
  it('is an error (exit 1) with a did-you-mean for validate, plan and sync, before any request', async () => {
    for (const [command, run] of [
      ['validate', envsync],
      ['plan', envsyncInProcess],
      ['sync', envsyncInProcess],
    ] as const) {
      const result = await run(
        [command, '--manifests', 'manifests', '--org', 'acmee', '--api-url', api.url],
        { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } },
      );
      expect(result, command).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr, command).toContain(
        `envsync ${command}: --org acmee: no manifest declares this org (did you mean "acme"?); the manifests declare acme, globex`,
      );
    }
    expect(await api.getRequests(100)).toEqual([]);
    expect(await cli(['validate', '--manifests', 'manifests', '--org', 'globex'])).toMatchObject({
      code: 0,
      stderr: '',
    });
  });

  it('also shows the problems of files too broken to say which org they declare', async () => {
    await writeFile(tmp.path('broken.yaml'), 'org: [acme\nenvironments: x\n');
    const result = await cli(['validate', 'manifests', 'broken.yaml', '--org', 'zeta']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('--org zeta: no manifest declares this org;');
    expect(result.stderr).toMatch(/^ {2}broken\.yaml:2:1 YAML syntax: /m);
  });

  it('for export, an org the service does not know is an error that says to check the name', async () => {
    const result = await cli(['export', '--api-url', api.url, '--org', 'acme', '--org', 'acmee'], {
      ENVSYNC_TOKEN: TOKEN,
    });
    expect(result).toMatchObject({ code: 1, stdout: expect.stringContaining('org: acme\n') });
    expect(result.stderr).toContain(
      'envsync export: org acmee: GET /api/v2/environments/acmee: 404',
    );
    expect(result.stderr).toContain(
      'the service knows no organization "acmee": check the name given to --org',
    );
  });
});
