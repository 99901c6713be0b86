/**
 * The settings table as the CLI shows it: errors, help, precedence. Most runs are the CLI's `main`
 * in this process, which is given the arguments, environment, directory and output streams; one
 * run per kind of answer (an unknown command, an unknown flag, a flag before the command, a
 * command's --help) is a real child process, for its exit code and stdio.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/manifests', import.meta.url));

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('unknown commands and flags', () => {
  it('an unknown command: two lines, a did-you-mean and a pointer to --help, exit 1', async () => {
    const result = await envsync(['plna']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'envsync: unknown command "plna" (did you mean "plan"?)\nRun "envsync --help" for the list of commands.\n',
    });
  });

  it('an unknown flag: two lines with a did-you-mean, not the whole help', async () => {
    const result = await envsync(['validate', '--manifest', 'm']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'envsync validate: unknown flag --manifest (did you mean --manifests?)\n' +
        'Usage: envsync validate [flags] [PATH...] ("envsync validate --help" lists the flags)\n',
    });
  });

  it('a flag of another command says which commands take it', async () => {
    const daemonFlag = await envsyncInProcess(['plan', '--interval', '5m']);
    expect(daemonFlag.code).toBe(1);
    expect(daemonFlag.stderr).toContain(
      'envsync plan: --interval is not a flag of envsync plan; envsync run takes it\n',
    );
    // The parse refuses it before `run` would wait for signals.
    const output = await envsyncInProcess(['run', '--output', 'json'], { endsBeforeStart: true });
    expect(output.stderr).toContain(
      '--output is not a flag of envsync run; envsync validate, plan and sync take it',
    );
  });

  it('--token: where the token goes instead, without repeating the value given', async () => {
    const hint =
      'there is no --token flag, so that the token stays out of shell histories and process lists: ' +
      'set ENVSYNC_TOKEN, or pass --token-file PATH (env ENVSYNC_TOKEN_FILE)';
    const result = await envsync(['plan', '--token', 'tok-3f9a-never-shown']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        `envsync plan: ${hint}\n` +
        'Usage: envsync plan [flags] ("envsync plan --help" lists the flags)\n',
    });
    for (const args of [
      ['sync', '--token=tok-3f9a-never-shown'],
      ['export', '--org', 'acme', '--token', 'tok-3f9a-never-shown'],
    ]) {
      const other = await envsyncInProcess(args);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(`: ${hint}\n`);
      expect(other.stderr).not.toContain('tok-3f9a');
    }
    const daemon = await envsyncInProcess(['run', '--api-token', 'x'], { endsBeforeStart: true });
    expect(daemon.stderr).toContain(
      'envsync run: there is no --api-token flag, so that the token stays out of',
    );
    // validate reads no token: the emulator's --token is the nearest there is.
    expect((await envsyncInProcess(['validate', '--token', 'x'])).stderr).toContain(
      '--token is not a flag of envsync validate; envsync emulator takes it',
    );
  });

  it('a flag before the command', async () => {
    const result = await envsync(['--hepl']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('envsync: unknown flag --hepl (did you mean --help?)');
  });

  it('a bad value names the flag, whichever source gave it, and exits 1', async () => {
    const flag = await envsyncInProcess([
      'validate',
      '--manifests',
      EXAMPLES,
      '--annotations',
      'gitlab',
    ]);
    expect(flag).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'envsync validate: --annotations: "gitlab" is not one of github, none\n',
    });
    const env = await envsyncInProcess(['validate', '--manifests', EXAMPLES], {
      env: { ENVSYNC_OUTPUT: 'yaml' },
    });
    expect(env.stderr).toBe(
      'envsync validate: --output: "yaml" is not one of text, json, markdown\n',
    );
  });

  it('--out and --plan only where they make sense', async () => {
    const out = await envsyncInProcess(['sync', '--out', 'plan.json']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('--out saves a plan');
    const plan = await envsyncInProcess(['sync', '--dry-run', '--plan', 'plan.json']);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('--plan applies a saved plan');
  });
});

describe('nonsense values are usage errors', () => {
  it('--timeout 0, a negative, NaN, an empty or a too-long duration: exit 1, naming the flag', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--timeout', '0'], {}, '--timeout: "0" must be longer than 0 (use e.g. 500ms, 30s, 5m)'],
      [['--timeout=-1s'], {}, '--timeout: "-1s" is not a duration'],
      [['--timeout', 'NaN'], {}, '--timeout: "NaN" is not a duration'],
      [['--timeout', ''], {}, '--timeout: "" is not a duration'],
      [['--timeout', '1e999'], {}, '--timeout: "1e999" is not a duration'],
      [['--timeout', '30'], {}, '--timeout: "30" is not a duration'],
      [['--timeout', '600h'], {}, '--timeout: "600h" is too long'],
      [['--retry-delay', '0s'], {}, '--retry-delay: "0s" must be longer than 0'],
      [['--concurrency', '0'], {}, '--concurrency: "0" must be a whole number from 1 to 256'],
      [[], { ENVSYNC_TIMEOUT: '0' }, '--timeout: "0" must be longer than 0'],
      [[], { ENVSYNC_INSECURE_HTTP: 'yes' }, '--insecure-http: "yes" must be true or false'],
      [
        [],
        { ENVSYNC_DETAILED_EXITCODE: 'TRUE' },
        '--detailed-exitcode: "TRUE" must be true or false',
      ],
    ];
    for (const [args, env, message] of cases) {
      const result = await envsyncInProcess(['plan', '--manifests', EXAMPLES, ...args], { env });
      expect(result, `${args.join(' ')} ${JSON.stringify(env)}`).toMatchObject({
        code: 1,
        stdout: '',
      });
      expect(result.stderr).toContain(`envsync plan: ${message}`);
    }
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

  it('help comes after the strict parse: a bad flag with --help is still an error', async () => {
    const result = await envsyncInProcess(['export', '--manifests', 'm', '--help']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--manifests is not a flag of envsync export');
  });
});

describe('precedence through the CLI', () => {
  it('flags > environment > config file > defaults, with config paths relative to the file', async () => {
    await tmp.write('one/acme.yaml', 'org: acme\nenvironments: []\n');
    await tmp.write('two/a.yaml', 'org: a\nenvironments: []\n');
    await tmp.write('two/b.yaml', 'org: b\nenvironments: []\n');
    await tmp.write('conf/envsync.yaml', 'manifests: ../one\noutput: json\n');
    const run = (args: string[], env: Record<string, string> = {}) =>
      envsyncInProcess(['validate', '--config', 'conf/envsync.yaml', ...args], {
        cwd: tmp.dir,
        env,
      });

    const file = await run([]);
    expect(JSON.parse(file.stdout)).toMatchObject({ summary: { files: 1, orgs: 1 } });
    const env = await run([], { ENVSYNC_MANIFESTS: 'two', ENVSYNC_OUTPUT: 'text' });
    expect(env.stdout).toBe('valid: 2 file(s), 2 org(s), 0 environment(s)\n');
    const flags = await run(['--manifests', 'one', '-o', 'markdown'], { ENVSYNC_MANIFESTS: 'two' });
    expect(flags.stdout).toContain('valid: 1 file(s), 1 org(s), 0 environment(s)');
    expect(flags.stdout).toMatch(/^### envsync validate/);
  });
});
