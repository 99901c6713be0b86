import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';

/**
 * `envsync validate [PATH...]`, as a pre-commit hook calls it: real files; a real CLI process where
 * the hook's verdict is checked (the exit code), the CLI's `main` in this process for the rest.
 */

const GOOD_A = `org: acme
environments:
  - name: dev
    type: K8S
    description: d
`;
const GOOD_B = `org: acme
environments:
  - name: prod
    type: S3
    description: d
`;
const BAD = `org: beta
environments:
  - name: web
    type: k8s
    description: d
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'envsync-validate-paths-'));
  await mkdir(path.join(dir, 'manifests', 'more'), { recursive: true });
  await writeFile(path.join(dir, 'manifests', 'a.yaml'), GOOD_A);
  await writeFile(path.join(dir, 'manifests', 'b.yaml'), GOOD_B);
  await writeFile(path.join(dir, 'manifests', 'more', 'c.yml'), GOOD_B.replace('prod', 'stage'));
  await writeFile(path.join(dir, 'bad.yaml'), BAD);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('envsync validate PATH...', () => {
  it('.pre-commit-hooks.yaml is valid YAML with the fields pre-commit requires', async () => {
    const text = await readFile(new URL('../../.pre-commit-hooks.yaml', import.meta.url), 'utf8');
    const hooks = parse(text) as Record<string, unknown>[];
    expect(Array.isArray(hooks)).toBe(true);
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
    expect(files.test('manifests/acme.yaml') && files.test('x.yml')).toBe(true);
    expect(files.test('README.md')).toBe(false);
  });

  it('validates the given files and folders, by relative and by absolute path, and exits 0 when they are good', async () => {
    const relative = await envsync(['validate', 'manifests/a.yaml', 'manifests/b.yaml'], {
      cwd: dir,
    });
    expect(relative.stderr).toBe('');
    expect(relative).toMatchObject({ code: 0 });
    expect(relative.stdout).toContain('valid: 2 file(s), 1 org(s), 2 environment(s)');
    // The paths are resolved from the command's directory, as in a process: `main` here.
    const absolute = await envsyncInProcess(
      ['validate', path.join(dir, 'manifests', 'a.yaml'), path.join(dir, 'manifests', 'more')],
      { cwd: tmpdir() },
    );
    expect(absolute).toMatchObject({ code: 0 });
    expect(absolute.stdout).toContain('valid: 2 file(s), 1 org(s), 2 environment(s)');
    // A folder is walked like --manifests, each file read once however often it is named.
    const walked = await envsyncInProcess(['validate', 'manifests', 'manifests/a.yaml'], {
      cwd: dir,
    });
    expect(walked).toMatchObject({ code: 0 });
    expect(walked.stdout).toContain('valid: 3 file(s), 1 org(s), 3 environment(s)');
  });

  it('reports a bad file at file:line:col and exits 1', async () => {
    const relative = await envsync(['validate', 'manifests/a.yaml', 'bad.yaml'], { cwd: dir });
    expect(relative.code).toBe(1);
    expect(relative.stdout).toMatch(/^bad\.yaml:4:11 environments\[0\]\.type: .*K8S/m);
    // Outside the working directory, a file is shown by its absolute path.
    const absolute = await envsyncInProcess(['validate', path.join(dir, 'bad.yaml')], {
      cwd: path.join(dir, 'manifests', 'more'),
    });
    expect(absolute.code).toBe(1);
    expect(absolute.stdout).toContain(`${path.join(dir, 'bad.yaml')}:4:11`);
  });

  it('reports every problem in one run: a name declared twice across the given files beside a tag and a bad value', async () => {
    // The second file has other problems too: the repeated name is reported with them, not
    // only once they are fixed.
    await writeFile(
      path.join(dir, 'broken.yaml'),
      'org: acme\nenvironments:\n  - name: dev\n    type: k8s\n    description: !custom d\n',
    );
    const result = await envsyncInProcess(['validate', 'manifests/a.yaml', 'broken.yaml'], {
      cwd: dir,
    });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines).toEqual(
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
    const missing = await envsyncInProcess(['validate', 'manifests/a.yaml', 'nope.yaml'], {
      cwd: dir,
    });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('nope.yaml:1:1 no such file or folder');
    const both = await envsyncInProcess(['validate', '--manifests', 'manifests', 'bad.yaml'], {
      cwd: dir,
    });
    expect(both).toMatchObject({ code: 1, stdout: '' });
    expect(both.stderr).toContain('give either PATHs or --manifests, not both');
  });
});
