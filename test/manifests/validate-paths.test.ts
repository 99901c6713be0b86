/**
 * `envsync validate [PATH...]`, as a pre-commit hook calls it: real files; a real CLI process where
 * the hook's verdict is checked (the exit code), the CLI's `main` in this process for the rest.
 */
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { tree } from './tree.ts';

const manifest = (org: string, env: string, type: string) =>
  `org: ${org}\nenvironments:\n  - name: ${env}\n    type: ${type}\n    description: d\n`;
const FILES = {
  'manifests/a.yaml': manifest('acme', 'dev', 'K8S'),
  'manifests/b.yaml': manifest('acme', 'prod', 'S3'),
  'manifests/more/c.yml': manifest('acme', 'stage', 'S3'),
  // `k8s` is not a type.
  'bad.yaml': manifest('beta', 'web', 'k8s'),
};
const validate = (cwd: string, ...paths: string[]) =>
  envsyncInProcess(['validate', ...paths], { cwd });

describe('envsync validate PATH...', () => {
  it('.pre-commit-hooks.yaml is valid YAML with the fields pre-commit requires', async () => {
    const text = await readFile(new URL('../../.pre-commit-hooks.yaml', import.meta.url), 'utf8');
    const hooks = parse(text) as Record<string, unknown>[];
    const hook = hooks.find((h) => h['id'] === 'envsync-validate');
    expect(hook).toMatchObject({
      id: 'envsync-validate',
      name: expect.any(String),
      entry: 'envsync validate',
      language: 'node',
      files: String.raw`\.(ya?ml)$`,
      pass_filenames: true,
    });
    const files = new RegExp(hook?.['files'] as string);
    expect(['manifests/acme.yaml', 'x.yml', 'README.md'].map((f) => files.test(f))).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('validates the given files and folders, by relative and by absolute path, and exits 0 when they are good', async () => {
    const { dir } = await tree(FILES);
    const relative = await envsync(['validate', 'manifests/a.yaml', 'manifests/b.yaml'], {
      cwd: dir,
    });
    expect(relative).toMatchObject({ code: 0, stderr: '' });
    expect(relative.stdout).toContain('valid: 2 file(s), 1 org(s), 2 environment(s)');
    // The paths are resolved from the command's directory.
    const absolute = await validate(
      tmpdir(),
      path.join(dir, 'manifests/a.yaml'),
      path.join(dir, 'manifests/more'),
    );
    expect(absolute).toMatchObject({ code: 0 });
    expect(absolute.stdout).toContain('valid: 2 file(s), 1 org(s), 2 environment(s)');
    // A folder is walked like --manifests, each file read once however often it is named.
    const walked = await validate(dir, 'manifests', 'manifests/a.yaml');
    expect(walked).toMatchObject({ code: 0 });
    expect(walked.stdout).toContain('valid: 3 file(s), 1 org(s), 3 environment(s)');
  });

  it('reports a bad file at file:line:col and exits 1; outside the working directory, by its absolute path', async () => {
    const { dir } = await tree(FILES);
    const relative = await envsync(['validate', 'manifests/a.yaml', 'bad.yaml'], { cwd: dir });
    expect(relative.code).toBe(1);
    expect(relative.stdout).toMatch(/^bad\.yaml:4:11 environments\[0\]\.type: .*K8S/m);
    const absolute = await validate(path.join(dir, 'manifests/more'), path.join(dir, 'bad.yaml'));
    expect(absolute.code).toBe(1);
    expect(absolute.stdout).toContain(`${path.join(dir, 'bad.yaml')}:4:11`);
  });

  it('reports every problem in one run: a name declared twice across the given files beside a tag and a bad value', async () => {
    // The second file has other problems too: the repeated name is reported with them.
    const { dir } = await tree({
      ...FILES,
      'broken.yaml':
        'org: acme\nenvironments:\n  - name: dev\n    type: k8s\n    description: !custom d\n',
    });
    const result = await validate(dir, 'manifests/a.yaml', 'broken.yaml');
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^broken\.yaml:4:11 environments\[0\]\.type: "k8s" is not one of/),
        expect.stringMatching(/^broken\.yaml:5:18 unknown YAML tag "!custom"/),
        expect.stringMatching(
          /^manifests\/a\.yaml:3:5 environments\[0\]\.name: environment "dev" of org "acme" is declared twice: here and at broken\.yaml:3:5/,
        ),
      ]),
    );
    expect(result.stdout).toContain('invalid: 3 problem(s)');
  });

  it('reports a path that is neither file nor folder, and refuses PATHs with --manifests', async () => {
    const { dir } = await tree(FILES);
    const missing = await validate(dir, 'manifests/a.yaml', 'nope.yaml');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('nope.yaml:1:1 no such file or folder');
    const both = await validate(dir, '--manifests', 'manifests', 'bad.yaml');
    expect(both).toMatchObject({ code: 1, stdout: '' });
    expect(both.stderr).toContain('give either PATHs or --manifests, not both');
  });
});
