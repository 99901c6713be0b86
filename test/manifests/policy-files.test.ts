/**
 * Top-level `policies:`: each entry's file, relative to its manifest, is read as the policy's text
 * (bounded, UTF-8, a regular file inside the manifests root) and is never read as a manifest.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/manifests/load.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const load = (maxFileBytes = 1024 * 1024, paths?: string[]) =>
  loadManifests({ root: 'manifests', cwd: tmp.dir, maxFileBytes, paths });

const POLICY =
  '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n';

const manifest = (entries: string, org = 'acme') =>
  `org: ${org}\npolicies:\n${entries}environments:\n  - name: prod\n    type: K8S\n    description: Prod\n    policies: [prod-requirements]\n`;

const entry = (name: string, file: string, description?: string) =>
  `  - name: ${name}\n${description === undefined ? '' : `    description: ${description}\n`}    file: ${file}\n`;

/** Every problem of the load as `file:line:col path: message`. */
async function problems() {
  const set = await load();
  return [...set.unattributed, ...set.orgs.flatMap((o) => o.problems)].map(
    (p) => `${p.file}:${p.line}:${p.column} ${p.path}: ${p.message}`,
  );
}

describe('policy files', () => {
  it('reads the file relative to the manifest, and never reads it as a manifest', async () => {
    await tmp.write(
      'manifests/teams/acme.yaml',
      manifest(entry('prod-requirements', '../policies/prod.yaml', 'What production needs')),
    );
    await tmp.write('manifests/policies/prod.yaml', POLICY);
    const set = await load();
    expect(set.unattributed).toEqual([]);
    expect(set.fileCount).toBe(1);
    const [acme] = set.orgs;
    expect(acme?.problems).toEqual([]);
    expect(acme?.environments.map((e) => e.name)).toEqual(['prod']);
    // The policy file serves the org too (an edit of it alone is a change of the org's manifests).
    expect(acme?.files).toEqual(['manifests/policies/prod.yaml', 'manifests/teams/acme.yaml']);
    expect(acme?.policies).toEqual([
      {
        name: 'prod-requirements',
        description: 'What production needs',
        content: POLICY,
        file: 'manifests/policies/prod.yaml',
        source: { file: 'manifests/teams/acme.yaml', line: 3, column: 5, path: 'policies[0]' },
      },
    ]);
  });

  it('leaves the description out when the manifest does', async () => {
    await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', 'p.yaml')));
    await tmp.write('manifests/p.yaml', POLICY);
    const [acme] = (await load()).orgs;
    expect(acme?.policies?.[0]).not.toHaveProperty('description');
  });

  it('does not read a named file as a manifest even when the manifest naming it has another error', async () => {
    // The policy file alone, read as a manifest, would say: no org, unknown keys.
    await tmp.write(
      'manifests/acme.yaml',
      `org: acme\npolicies:\n  - name: p\n    file: p.yaml\n    colour: red\nenvironments: []\n`,
    );
    await tmp.write('manifests/p.yaml', POLICY);
    expect(await problems()).toEqual([
      'manifests/acme.yaml:5:5 policies[0].colour: unknown key "colour" (allowed: name, description, file)',
    ]);
  });

  it('takes out only the named files: another *.yaml that is not a manifest is skipped, an error with strict', async () => {
    await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', 'p.yaml')));
    await tmp.write('manifests/p.yaml', POLICY);
    await tmp.write('manifests/stray.yaml', POLICY);
    const set = await load();
    // The policy file is the org's, not a file skipped; the stray one is skipped, not an error.
    expect(set.skipped).toEqual([
      { file: 'manifests/stray.yaml', reason: 'not a manifest: no org and no environments' },
    ]);
    expect(await problems()).toEqual([]);
    const strict = await loadManifests({
      root: 'manifests',
      cwd: tmp.dir,
      maxFileBytes: 1024 * 1024,
      strict: true,
    });
    expect(strict.skipped).toEqual([]);
    const found = strict.unattributed.map((p) => `${p.file}:${p.line}:${p.column} ${p.path}`);
    expect(found).toContain('manifests/stray.yaml:1:1 org');
    expect(found.every((line) => line.startsWith('manifests/stray.yaml:'))).toBe(true);
  });

  it.each([
    [
      'a missing file',
      'nope.yaml',
      async () => undefined,
      'policy file "nope.yaml": does not exist (looked for manifests/nope.yaml)',
    ],
    [
      'a folder',
      'policies',
      async () => mkdir(tmp.path('manifests/policies')),
      'policy file "policies": is a folder (manifests/policies), not a file',
    ],
    [
      'a path escaping the root',
      '../outside.yaml',
      async () => tmp.write('outside.yaml', POLICY),
      `policy file "../outside.yaml": is outside the manifests root (ROOT); a policy file must lie inside it`,
    ],
    [
      'an absolute path',
      'ABSOLUTE',
      async () => tmp.write('manifests/abs.yaml', POLICY),
      'policy file "ABSOLUTE": must be a path relative to this manifest, inside the manifests root',
    ],
    [
      'a symbolic link leading out of the root',
      'link.yaml',
      async () => {
        await tmp.write('outside.yaml', POLICY);
        await symlink(tmp.path('outside.yaml'), tmp.path('manifests/link.yaml'));
      },
      `policy file "link.yaml": leads outside the manifests root (through a symbolic link, to OUTSIDE); a policy file must lie inside it`,
    ],
    [
      'a FIFO',
      'fifo.yaml',
      async () => execFileSync('mkfifo', [tmp.path('manifests/fifo.yaml')]),
      'policy file "fifo.yaml": is a FIFO (named pipe), not a regular file (manifests/fifo.yaml)',
    ],
    [
      'an empty file',
      'empty.yaml',
      async () => tmp.write('manifests/empty.yaml', '\n  \n'),
      'policy file "empty.yaml": is empty; it must hold the policy\'s YAML',
    ],
    [
      'a binary file',
      'bin.yaml',
      async () => tmp.write('manifests/bin.yaml', Buffer.from([0x61, 0x00, 0x62])),
      'policy file "bin.yaml": is read as a manifest, since it is not YAML that declares nothing (binary file (contains NUL bytes), not YAML); a manifest is never a policy: name the file holding the policy\'s YAML, or keep this file out of manifest discovery with .envsyncignore',
    ],
    [
      'a file that is not UTF-8',
      'latin1.yaml',
      async () => tmp.write('manifests/latin1.yaml', Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a])),
      'policy file "latin1.yaml": is read as a manifest, since it is not YAML that declares nothing (not valid UTF-8 text; save the file as UTF-8); a manifest is never a policy: name the file holding the policy\'s YAML, or keep this file out of manifest discovery with .envsyncignore',
    ],
    [
      'the manifest itself',
      'acme.yaml',
      async () => undefined,
      'policy file "acme.yaml": is this manifest itself; name the file holding the policy',
    ],
    [
      'another manifest',
      'beta.yaml',
      async () =>
        tmp.write(
          'manifests/beta.yaml',
          'org: beta\nenvironments:\n  - name: x\n    type: K8S\n    description: x\n',
        ),
      'policy file "beta.yaml": is org "beta"\'s manifest; a manifest is never a policy: name the file holding the policy\'s YAML',
    ],
    [
      'a manifest that does not parse',
      'broken.yaml',
      async () => tmp.write('manifests/broken.yaml', 'rules: [x\n'),
      'policy file "broken.yaml": is read as a manifest, since it is not YAML that declares nothing (YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]); a manifest is never a policy: name the file holding the policy\'s YAML, or keep this file out of manifest discovery with .envsyncignore',
    ],
  ])(
    '%s is an error at the file value, and holds the org back',
    async (_what, file, setup, message) => {
      const written = file === 'ABSOLUTE' ? tmp.path('manifests/abs.yaml') : file;
      await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', written)));
      await setup();
      const set = await load();
      const acme = set.orgs.find((o) => o.org === 'acme');
      expect(acme?.environments).toEqual([]);
      expect(acme?.policies ?? []).toEqual([]);
      const expected = message
        .replace('ABSOLUTE', written)
        .replace('ROOT', tmp.path('manifests'))
        .replace('OUTSIDE', tmp.path('outside.yaml'));
      expect(
        acme?.problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.path}: ${p.message}`),
      ).toEqual([`manifests/acme.yaml:4:11 policies[0].file: ${expected}`]);
      // Another manifest named as a policy file stays a manifest.
      expect(set.orgs.map((o) => o.org)).toEqual(
        file === 'beta.yaml' ? ['acme', 'beta'] : ['acme'],
      );
    },
  );

  it('bounds a policy file by --max-file-bytes', async () => {
    await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', 'p/big.yaml')));
    await tmp.write('manifests/p/big.yaml', `a: ${'x'.repeat(500)}\n`);
    const set = await load(400);
    expect(set.orgs[0]?.problems.map((p) => p.message)).toEqual([
      'policy file "p/big.yaml": is read as a manifest, since it is not YAML that declares nothing (file is larger than the limit of 400 bytes (--max-file-bytes)); a manifest is never a policy: name the file holding the policy\'s YAML, or keep this file out of manifest discovery with .envsyncignore',
    ]);
  });

  it('refuses one policy document declared twice in an org, naming both places', async () => {
    await tmp.write('manifests/a.yaml', manifest(entry('prod-requirements', 'p.yaml')));
    await tmp.write(
      'manifests/b.yaml',
      `org: acme\npolicies:\n${entry('other', 'p.yaml')}${entry('prod-requirements', 'p.yaml')}environments: []\n`,
    );
    await tmp.write('manifests/p.yaml', POLICY);
    expect(await problems()).toEqual([
      'manifests/b.yaml:5:5 policies[1].name: policy document "prod-requirements" of org "acme" is declared twice: here and at manifests/a.yaml:3:5',
    ]);
  });

  it('refuses a name listed twice in one document at the second', async () => {
    await tmp.write(
      'manifests/acme.yaml',
      `org: acme\npolicies:\n${entry('p', 'p.yaml')}${entry('p', 'p.yaml')}environments: []\n`,
    );
    await tmp.write('manifests/p.yaml', POLICY);
    expect(await problems()).toEqual([
      'manifests/acme.yaml:5:11 policies[1].name: policy document "p" is listed twice',
    ]);
  });

  it('reads policy files for manifests named on the command line too', async () => {
    await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', 'p.yaml')));
    await tmp.write('manifests/p.yaml', POLICY);
    const set = await load(1024 * 1024, ['manifests/acme.yaml']);
    expect(set.orgs[0]?.problems).toEqual([]);
    expect(set.orgs[0]?.policies?.map((p) => p.content)).toEqual([POLICY]);
  });
});
