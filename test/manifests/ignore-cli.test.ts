/**
 * The CLI with manifests among other files: `.envsyncignore`; `--exclude` as a flag, a variable
 * and a config file key; other YAML skipped with one line in the log; `--strict` in its three
 * forms; what validate says of a folder with no manifest; plan against the emulator. The CLI's
 * `main` in this process, real temporary folders.
 */
import { mkdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { tree } from './tree.ts';

const ACME = 'org: acme\nenvironments:\n  - name: dev\n    type: K8S\n    description: d\n';
/** Random-looking: envsync masks any 12 characters of the token in a row in what it prints. */
const TOKEN = 'Hq7Wz2Lp9Xc4Rv8N';
const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n';
/** A chart's template: not YAML until rendered. */
const TEMPLATE = '{{- if .Values.enabled }}\nkind: [ {{ .Values.kind }}\n{{- end }}\n';
const SKIPPED = 'not a manifest: no org and no environments';
const OTHERS = {
  'manifests/acme.yaml': ACME,
  'manifests/k8s/config.yaml': CONFIG_MAP,
  'manifests/ci.yml': 'on: [push]\njobs:\n  build:\n    runs-on: x\n',
};

const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  envsyncInProcess(args, { cwd: dir, env });

/** The messages (and files) of stderr's JSON log lines at a level: 30 info, 40 warn. */
const logged = (stderr: string, level: number) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; file?: string })
    .filter((line) => line.level === level);
const warnings = (stderr: string) => logged(stderr, 40).map((line) => line.msg);

describe('YAML that is not a manifest', () => {
  it('is skipped with one info line each, and validate says how many in its verdict and its JSON', async () => {
    const tmp = await tree(OTHERS);
    const result = await cli(tmp.dir, [
      'validate',
      '--manifests',
      'manifests',
      '--log-level',
      'info',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'valid: 1 file(s), 1 org(s), 1 environment(s); 2 file(s) skipped, not manifests\n',
    );
    expect(logged(result.stderr, 30).map(({ msg, file }) => [msg, file])).toEqual([
      [`manifests/ci.yml: ${SKIPPED}; skipped`, 'manifests/ci.yml'],
      [`manifests/k8s/config.yaml: ${SKIPPED}; skipped`, 'manifests/k8s/config.yaml'],
    ]);
    const json = await cli(tmp.dir, ['validate', '--manifests', 'manifests', '-o', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: true,
      summary: { files: 1, orgs: 1, errors: 0, skipped: 2 },
      skipped: [
        { file: 'manifests/ci.yml', reason: SKIPPED },
        { file: 'manifests/k8s/config.yaml', reason: SKIPPED },
      ],
    });
    // The JSON logs of a one-shot command start at warn: the report alone says it there.
    expect(json.stderr).toBe('');
  });

  it('is an error with --strict, ENVSYNC_STRICT=true or strict: true in the config file', async () => {
    const tmp = await tree({ ...OTHERS, 'envsync.yaml': 'manifests: manifests\nstrict: true\n' });
    for (const [args, env] of [
      [['--manifests', 'manifests', '--strict'], {}],
      [['--manifests', 'manifests'], { ENVSYNC_STRICT: 'true' }],
      [['--config', 'envsync.yaml'], {}],
    ] as const) {
      const result = await cli(tmp.dir, ['validate', ...args], env);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stdout).toContain(
        'manifests/k8s/config.yaml:1:1 org: is required but missing\n',
      );
      expect(result.stdout).toContain(
        'manifests/ci.yml:1:1 on: unknown key "on" (allowed: org, prune, suspend, policies, environments)\n',
      );
      expect(result.stdout).toMatch(
        /^invalid: 9 problem\(s\); 0 org\(s\) would be left alone; 1 org\(s\) valid\n$/m,
      );
    }
    // The variable beats the config file, as every setting's does.
    const off = await cli(tmp.dir, ['validate', '--config', 'envsync.yaml'], {
      ENVSYNC_STRICT: 'false',
    });
    expect(off.code).toBe(0);
  });

  it('alone in a folder: validate says no manifest was found, warns, and exits 0; --strict reads it as one', async () => {
    const tmp = await tree({ 'others/k8s.yaml': CONFIG_MAP });
    const others = await cli(tmp.dir, ['validate', '--manifests', 'others']);
    expect(others).toMatchObject({
      code: 0,
      stdout: 'valid: no manifest found: 1 YAML file(s) skipped, not manifests\n',
    });
    expect(warnings(others.stderr)).toEqual([
      'no manifest found in others: 1 YAML file(s) skipped, not manifests; nothing is declared, so nothing is planned or sent',
    ]);
    // --strict reads the file as a manifest: its problems, not the empty root, fail it.
    const strict = await cli(tmp.dir, ['validate', '--manifests', 'others', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('others/k8s.yaml:1:1 org: is required but missing');
    expect(warnings(strict.stderr)).toEqual([]);
  });
});

describe('a manifests root without a manifest', () => {
  const EMPTY =
    'no manifest found in manifests: no *.yaml or *.yml file to read; nothing is declared, so nothing is planned or sent';

  it.each([
    ['an empty folder', {}],
    [
      'only backups and notes',
      { 'acme.yaml.bak': ACME, 'README.md': '# here\n', 'old/x.yml~': ACME },
    ],
  ])('%s: validate and plan warn and exit 0; with --strict they exit 1', async (_what, files) => {
    const tmp = await tree(
      Object.fromEntries(Object.entries(files).map(([name, text]) => [`manifests/${name}`, text])),
    );
    await mkdir(tmp.path('manifests'), { recursive: true });
    const api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    try {
      const plan = ['plan', '--manifests', 'manifests', '--api-url', api.url, '--state', 's.json'];
      for (const args of [['validate', '--manifests', 'manifests'], plan]) {
        const result = await cli(tmp.dir, args, { ENVSYNC_TOKEN: TOKEN });
        expect(result.code, result.stderr + result.stdout).toBe(0);
        expect(warnings(result.stderr)).toEqual([EMPTY]);
        const strict = await cli(tmp.dir, [...args, '--strict'], { ENVSYNC_TOKEN: TOKEN });
        expect(strict).toMatchObject({ code: 1, stdout: '' });
        expect(strict.stderr).toContain(`${EMPTY} (--strict refuses a root without one)`);
      }
      // Nothing was asked of the service: there is no org to ask about.
      expect(await api.getRequests(100)).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('is not said when files are named (validate PATH...)', async () => {
    const tmp = await tree({ 'manifests/acme.yaml': ACME });
    const result = await cli(tmp.dir, ['validate', 'manifests/acme.yaml']);
    expect(result.code).toBe(0);
    expect(warnings(result.stderr)).toEqual([]);
  });
});

describe('.envsyncignore and --exclude', () => {
  it('leave files out: the ignore file, then the flag, the variable or the config file key; ! takes a line back', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': ACME,
      'manifests/charts/web/templates/deployment.yaml': TEMPLATE,
      // A manifest with a mistake: `k8s` is not a type.
      'manifests/drafts/beta.yaml': ACME.replace('acme', 'beta').replace('K8S', 'k8s'),
      'envsync.yaml': 'manifests: manifests\nexclude: [drafts/]\n',
    });
    const validate = (...args: string[]) => cli(tmp.dir, ['validate', ...args]);
    const valid = { code: 0, stdout: 'valid: 1 file(s), 1 org(s), 1 environment(s)\n' };
    const draft = 'manifests/drafts/beta.yaml:4:11 environments[0].type:';
    const everything = await validate('--manifests', 'manifests');
    expect(everything.code).toBe(1);
    expect(everything.stdout).toMatch(/^manifests\/charts\/web\/templates\/deployment\.yaml:/m);
    await tmp.write('manifests/.envsyncignore', '# rendered by helm, not by hand\ncharts/\n');
    const drafts = await validate('--manifests', 'manifests');
    expect(drafts.code).toBe(1);
    expect(drafts.stdout).toContain(draft);
    expect(drafts.stdout).not.toContain('charts/');
    for (const [args, env] of [
      [['--manifests', 'manifests', '--exclude', 'drafts/'], {}],
      [['--manifests', 'manifests', '--exclude', 'nothing/', '--exclude', 'drafts'], {}],
      [['--manifests', 'manifests'], { ENVSYNC_EXCLUDE: 'nothing/,drafts/' }],
      [['--config', 'envsync.yaml'], {}],
    ] as const) {
      const result = await cli(tmp.dir, ['validate', ...args], env);
      expect(result, `${args.join(' ')} ${JSON.stringify(env)}`).toMatchObject(valid);
    }
    // A flag replaces the config file's list: it does not add to it.
    const replaced = await validate('--config', 'envsync.yaml', '--exclude', 'nothing/');
    expect(replaced.code).toBe(1);
    expect(replaced.stdout).toContain(draft);
    // --exclude can take back a line of the ignore file with !.
    await tmp.write('manifests/.envsyncignore', 'charts/\ndrafts/\n');
    expect(await validate('--manifests', 'manifests')).toMatchObject(valid);
    const back = await validate('--manifests', 'manifests', '--exclude', '!drafts/');
    expect(back.code).toBe(1);
    expect(back.stdout).toContain(draft);
  });
});

describe('plan', () => {
  it('reads what validate reads: ignored files left out, other YAML skipped with its line, an error with --strict', async () => {
    const tmp = await tree({
      ...OTHERS,
      'manifests/charts/web/templates/deployment.yaml': TEMPLATE,
      'manifests/.envsyncignore': 'charts/\n',
    });
    const api = await startTestEmulator({ orgs: ['acme'], tokens: [{ token: TOKEN, orgs: null }] });
    try {
      const args = ['plan', '--manifests', 'manifests', '--api-url', api.url];
      const env = { ENVSYNC_TOKEN: TOKEN };
      const plan = await cli(tmp.dir, [...args, '--log-level', 'info'], env);
      expect(plan.code).toBe(0);
      expect(plan.stdout).toContain('Plan: 1 to create');
      const info = logged(plan.stderr, 30).map(({ msg }) => msg);
      expect(info).toContain(`manifests/k8s/config.yaml: ${SKIPPED}; skipped`);
      expect(plan.stderr).not.toContain('charts/');
      const strict = await cli(tmp.dir, [...args, '--strict'], env);
      expect(strict.code).toBe(1);
      expect(strict.stdout).toContain('manifests/k8s/config.yaml:1:1');
    } finally {
      await api.close();
    }
  });
});
