import { symlink } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifestFile } from '../../src/manifests/discover.ts';
import { envsync, envsyncInProcess, type CliResult } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'hostile-token-9a8b7c';
const ENV = '  - name: ok\n    type: K8S\n    description: fine\n';

/** Each hostile file, and a pattern its located error must match. */
const HOSTILE: Record<string, [string | Buffer, RegExp]> = {
  'invalid-yaml.yaml': [
    'org: evil-a\nenvironments: [\n  - name: x\n',
    /invalid-yaml\.yaml:\d+:\d+ YAML syntax: /,
  ],
  'alias-bomb.yaml': [
    ['org: evil-b', 'a: &a ["x","x","x","x","x","x","x","x","x"]']
      .concat(
        Array.from(
          { length: 9 },
          (_, i) =>
            `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
              .fill(`*${String.fromCharCode(97 + i)}`)
              .join(',')}]`,
        ),
      )
      .join('\n'),
    /alias-bomb\.yaml:\d+:\d+ cannot be read: Excessive alias count/,
  ],
  'deep-nesting.yaml': [
    // Far deeper than the YAML reader's recursion can go.
    `org: evil-c\nenvironments: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
    /deep-nesting\.yaml:\d+:\d+ YAML nested too deeply to be a manifest/,
  ],
  'too-big.yaml': [
    `org: evil-d\nenvironments: []\n# ${'x'.repeat(1_100_000)}\n`,
    /too-big\.yaml:1:1 file is larger than the limit of 1048576 bytes/,
  ],
  'enormous-line.yaml': [
    `org: evil-e\nenvironments: ${'x'.repeat(900_000)}\n`,
    /enormous-line\.yaml:2:15 environments: expected a list, got the string "x{10,}\.\.\.$/m,
  ],
  'binary.yaml': [
    Buffer.from([0x6f, 0x72, 0x67, 0x3a, 0x00, 0xff, 0xfe, 0x01, 0x02]),
    /binary\.yaml:1:1 binary file/,
  ],
  'latin1.yaml': [
    Buffer.from('org: evil-f\nenvironments: []\n# caf\xe9\n', 'latin1'),
    /latin1\.yaml:1:1 not valid UTF-8/,
  ],
  'proto.yaml': [
    `org: evil-g\n__proto__: {polluted: true}\nenvironments:\n  - name: x\n    type: K8S\n    description: d\n    constructor: {prototype: {polluted: true}}\n    prototype: 1\n`,
    /proto\.yaml:2:1 __proto__: unknown key "__proto__"/,
  ],
  'duplicate-keys.yaml': [
    `org: evil-h\nenvironments:\n${ENV}    description: again\n`,
    /duplicate-keys\.yaml:6:5 YAML syntax: Map keys must be unique/,
  ],
  'number-name.yaml': [
    `org: evil-i\nenvironments:\n  - name: 12345\n    type: K8S\n    description: d\n`,
    /environments\[0\]\.name: expected a string, got number 12345/,
  ],
  'yes-boolean.yaml': [
    `org: evil-j\nenvironments:\n${ENV}    include_scaling: on\n`,
    /include_scaling: expected true or false, got the string "on"/,
  ],
  'string-policies.yaml': [
    `org: evil-k\nenvironments:\n${ENV}    policies: pci\n`,
    /policies: expected a list, got the string "pci"/,
  ],
  'map-environments.yaml': [
    `org: evil-l\nenvironments:\n  prod: {type: K8S}\n`,
    /environments: expected a list, got a mapping/,
  ],
  'list-top.yaml': [
    '- org: evil-m\n- environments: []\n',
    /list-top\.yaml:1:1 expected a mapping with "org" and "environments", got a list/,
  ],
  'missing-org.yaml': [
    `environments:\n${ENV}`,
    /missing-org\.yaml:1:1 org: is required but missing/,
  ],
  // One name repeated 6,000 times: the first repeats are located, the rest counted, from one
  // parse of the file (this took a parse per repeat, minutes for a file under the size limit).
  'repeated-name.yaml': [
    `org: evil-o\nenvironments:\n${'  - {name: same, type: K8S, description: d}\n'.repeat(6000)}`,
    /repeated-name\.yaml:9:5 environments\[6\]\.name: \.\.\. and 5994 more environment name\(s\) of org "evil-o" declared twice from here on/,
  ],
  'escape-org.yaml': [
    'org: ../x\nenvironments: []\n',
    /escape-org\.yaml:1:6 org: "\.\.\/x" is not a valid name/,
  ],
  'escape-names.yaml': [
    `org: evil-n\nenvironments:\n${[
      '../x',
      'a/b',
      '%2e%2e',
      'a?b=c',
      'a#b',
      'a b',
      'bell\\u0007',
      'p\\u0440od',
      ' lead',
    ]
      .map((name) => `  - name: "${name}"\n    type: K8S\n    description: d\n`)
      .join('')}`,
    /escape-names\.yaml:3:11 environments\[0\]\.name: "\.\.\/x" is not a valid name/,
  ],
};

const VALID: Record<string, string> = {
  'good.yaml': `org: good\nenvironments:\n${ENV}`,
  'bom.yaml': `\ufefforg: bom-ok\nenvironments:\n${ENV}`,
  'empty.yaml': '',
  'comments-only.yaml': '# nothing declared here\n# nor here\n',
};

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
let validate: CliResult;
let sync: CliResult;

beforeAll(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
  for (const [name, [content]] of Object.entries(HOSTILE))
    await tmp.write(`manifests/${name}`, content);
  for (const [name, content] of Object.entries(VALID))
    await tmp.write(`manifests/${name}`, content);
  await tmp.write('outside/secret.yaml', `org: evil-outside\nenvironments:\n${ENV}`);
  await symlink(tmp.path('outside/secret.yaml'), tmp.path('manifests/outside-link.yaml'));
  await symlink(tmp.path('manifests'), tmp.path('manifests/loop'));
  await symlink(tmp.path('manifests/self-loop.yaml'), tmp.path('manifests/self-loop.yaml'));
  // validate reads what sync reads: in this process, for what it prints.
  const where = { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN }, timeoutMs: 30_000 };
  validate = await envsyncInProcess(['validate', '--manifests', 'manifests'], where);
  // Bounded memory: a whole sync of these files must fit in a small heap, in a process of its own.
  const args = `sync --manifests manifests --api-url ${api.url} --state state.json`.split(' ');
  const env = { ...where.env, NODE_OPTIONS: '--max-old-space-size=192' };
  sync = await envsync(args, { ...where, env });
}, 90_000);

afterAll(async () => {
  await api.close();
  await tmp.cleanup();
});

describe('hostile manifests', () => {
  it.each(Object.entries(HOSTILE))('%s gets a located, readable error', (_name, [, pattern]) => {
    expect(validate.stdout).toMatch(pattern);
    expect(sync.stdout).toMatch(pattern);
  });

  it('symlinks out of the root and symlink loops are not followed, and say so', () => {
    expect(validate.stdout).toContain(
      'manifests/outside-link.yaml:1:1 symlink points outside the manifests root: not followed',
    );
    expect(validate.stdout).toContain('manifests/self-loop.yaml:1:1 symlink loop: not followed');
  });

  it('one broken file says so in a few lines, not thousands', () => {
    for (const name of Object.keys(HOSTILE)) {
      const lines = validate.stdout.split('\n').filter((line) => line.includes(`${name}:`));
      expect(lines.length, name).toBeLessThanOrEqual(9);
    }
  });

  it('no crash, no stack trace, exit 1', () => {
    for (const result of [validate, sync]) {
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(result.stderr).not.toContain('unexpected error');
    }
  });

  it('no request for any org with a problem; the valid orgs are applied', async () => {
    const paths = new Set((await api.getRequests(1000)).map((r) => r.path.split('?')[0] ?? ''));
    expect([...paths].sort((a, b) => (a < b ? -1 : 1))).toEqual([
      '/api/v2/environments/bom-ok',
      '/api/v2/environments/good',
    ]);
    const store = await api.getStore();
    expect(Object.keys(store.orgs).sort()).toEqual(['bom-ok', 'good']);
    expect(sync.stdout).toContain('org good');
    expect(sync.stdout).toContain('+ create ok [applied]');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a file deleted between listing and reading is reported, not a crash', async () => {
    const outcome = readManifestFile(tmp.path('manifests/was-here.yaml'), 1024);
    const message = 'file disappeared while reading the manifests; run again';
    expect(outcome).toEqual({ ok: false, message });
  });
});
