/**
 * `envsync migrate`: the manifests rewritten for the service as it is today, the retired keys
 * removed and every other byte kept; a diff, --write, the exit codes, and a second run that has
 * nothing to do.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withoutRetiredKeys } from '../../src/manifests/migrate.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('withoutRetiredKeys', () => {
  it.each([
    [
      'a block mapping, a comment after the value going with it',
      'org: a\nenvironments:\n  - name: web\n    type: K8S\n    include_scaling: true # scaled\n    description: d\n',
      'org: a\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
    ],
    [
      'the first key of a list item: the next key moves up to the dash',
      'org: a\nenvironments:\n  - include_scaling: false\n    name: web\n    type: K8S\n    description: d\n',
      'org: a\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
    ],
    [
      'the last key, comments around it kept',
      'org: a\nenvironments:\n  # the web tier\n  - name: web\n    type: K8S\n    description: d\n    include_scaling: true\n  # next\n  - {name: db, type: S3, description: x}\n',
      'org: a\nenvironments:\n  # the web tier\n  - name: web\n    type: K8S\n    description: d\n  # next\n  - {name: db, type: S3, description: x}\n',
    ],
    [
      'flow mappings, in any place',
      'org: a\nenvironments:\n  - {name: a, include_scaling: true, type: S3, description: x}\n  - {name: b, type: S3, description: x, include_scaling: false}\n  - {include_scaling: true, name: c, type: S3, description: x}\n',
      'org: a\nenvironments:\n  - {name: a, type: S3, description: x}\n  - {name: b, type: S3, description: x}\n  - {name: c, type: S3, description: x}\n',
    ],
    [
      'every document of a file, CRLF line breaks kept',
      'org: a\r\nenvironments:\r\n  - name: web\r\n    include_scaling: true\r\n    type: K8S\r\n    description: d\r\n---\r\norg: b\r\nenvironments: []\r\n',
      'org: a\r\nenvironments:\r\n  - name: web\r\n    type: K8S\r\n    description: d\r\n---\r\norg: b\r\nenvironments: []\r\n',
    ],
  ])('removes the key from %s', (_what, before, after) => {
    const migrated = withoutRetiredKeys(before, ['include_scaling']);
    expect(migrated.text).toBe(after);
    expect(migrated.removed.length).toBeGreaterThan(0);
    expect(withoutRetiredKeys(after, ['include_scaling'])).toEqual({ text: after, removed: [] });
  });

  it('leaves a key of the same name outside an environment; refuses a file that does not parse', () => {
    const text = 'org: a\ninclude_scaling: true\nenvironments: []\n';
    expect(withoutRetiredKeys(text, ['include_scaling'])).toEqual({ text, removed: [] });
    const broken = 'org: a\nenvironments: [\n';
    expect(() => withoutRetiredKeys(broken, ['include_scaling'])).toThrow('fix it first');
  });
});

describe('envsync migrate', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    tmp = await tempDir();
  });
  afterEach(() => tmp.cleanup());
  const command = (name: string, ...args: string[]) =>
    envsyncInProcess([name, '--manifests', tmp.path('manifests'), ...args], { cwd: tmp.dir });
  const [run, validate] = [command.bind(null, 'migrate'), command.bind(null, 'validate')];

  const ACME = `# acme's environments
org: acme
environments:
  - name: web   # the front
    type: K8S
    description: "Web, tier one"
    include_scaling: true
    policies: [ pci ]

  - name: db
    type: S3
    description: ''
`;

  it('shows a diff (exit 2), writes with --write (exit 0), then has nothing to do; validate is clean', async () => {
    await tmp.write('manifests/acme.yaml', ACME);
    await tmp.write('manifests/k8s.yaml', 'apiVersion: v1\nkind: ConfigMap\n');
    const shown = await run();
    expect(shown.code, shown.stderr).toBe(2);
    expect(shown.stdout).toContain('--- a/');
    expect(shown.stdout.split('\n').filter((line) => /^[-+][^-+]/.test(line))).toEqual([
      '-    include_scaling: true',
    ]);
    expect(await readFile(tmp.path('manifests/acme.yaml'), 'utf8')).toBe(ACME);

    const written = await run('--write');
    expect(written.code, written.stderr).toBe(0);
    expect(await readFile(tmp.path('manifests/acme.yaml'), 'utf8')).toBe(
      ACME.replace('    include_scaling: true\n', ''),
    );
    const again = await run();
    expect([again.code, again.stdout]).toEqual([0, '']);
    expect(again.stderr).toContain('every manifest is up to date');
    const valid = await validate();
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
  });

  it('validate warns where a retired key and a deprecated one are; --strict refuses the retired one; not in the contract dialect', async () => {
    await tmp.write(
      'manifests/acme.yaml',
      ACME.replace('[ pci ]', '[ pci ]\n    require_provenance: true'),
    );
    const retired = `manifests/acme.yaml:7:5 environments[0].include_scaling: retired by the service on 2026-08-19; it always reports false; remove the key (envsync migrate does)`;
    const deprecated = `manifests/acme.yaml:9:5 environments[0].require_provenance: deprecated by the service: use policies instead (envsync still manages it)`;
    const text = await validate();
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`warning: ${retired}\nwarning: ${deprecated}\nvalid`);
    expect(text.stderr).toContain(`${retired} (and 1 more warnings, each in the report)`);
    expect(text.stderr.split('warning: ')).toHaveLength(2); // one log line per org
    const { orgs } = JSON.parse((await validate('-o', 'json')).stdout) as { orgs: [object] };
    expect(orgs[0]).toMatchObject({ warnings: [{ line: 7 }, { line: 9 }] });
    const strict = await validate('--strict');
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain(
      `${retired}; --strict refuses it: nothing is sent to this org\nwarning: ${deprecated}\n`,
    );
    const contract = await validate('--api-dialect', 'contract');
    expect(contract.stdout + contract.stderr).not.toContain('warning');
  });

  it('exits 1 naming a missing manifests root, and a file it cannot parse, after the others', async () => {
    const missing = await run();
    expect(`${missing.code} ${missing.stderr}`).toMatch(/^1 .*does not exist/);
    await tmp.write('manifests/acme.yaml', ACME);
    await tmp.write('manifests/broken.yaml', 'org: b\nenvironments: [\n');
    const broken = await run('--write');
    expect(`${broken.code} ${broken.stderr}`).toMatch(
      /^1 [^]*broken\.yaml: cannot be parsed as YAML/,
    );
    const acme = await readFile(tmp.path('manifests/acme.yaml'), 'utf8');
    expect(acme).toBe(ACME.replace('    include_scaling: true\n', ''));
  });
});
