/**
 * Top-level `policies:`: each entry's file, relative to its manifest, is read as the policy's text
 * (bounded, UTF-8, a regular file inside the manifests root) and is never read as a manifest.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/core/validation.ts';
import { found, load, only, tree } from './tree.ts';

const POLICY =
  '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n';
const manifest = (entries: string, org = 'acme') =>
  `org: ${org}\npolicies:\n${entries}environments:\n  - name: prod\n    type: K8S\n    description: Prod\n    policies: [prod-requirements]\n`;
const entry = (name: string, file: string, description?: string) =>
  `  - name: ${name}\n${description === undefined ? '' : `    description: ${description}\n`}    file: ${file}\n`;
const AS_MANIFEST = (why: string) =>
  `is read as a manifest, since it is not YAML that declares nothing (${why}); a manifest is never a policy: name the file holding the policy's YAML, or keep this file out of manifest discovery with .envsyncignore`;

describe('policy files', () => {
  it('reads the file relative to the manifest, and never reads it as a manifest', async () => {
    const tmp = await tree({
      'manifests/teams/acme.yaml': manifest(
        entry('prod-requirements', '../policies/prod.yaml', 'What production needs'),
      ),
      'manifests/policies/prod.yaml': POLICY,
    });
    const set = await load(tmp.dir);
    expect(found(set).problems).toEqual([]);
    expect(set.fileCount).toBe(1);
    const [acme] = set.orgs;
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

  it('are read as policies whatever the ignore rules, and for manifests named on the command line too', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest(entry('prod-requirements', 'policies/p.yaml')),
      'manifests/policies/p.yaml': POLICY,
    });
    for (const rules of ['', 'policies/\n', '*.yaml\n!/acme.yaml\n']) {
      await tmp.write('manifests/.envsyncignore', rules);
      for (const options of [{}, { strict: true }, { paths: ['manifests/acme.yaml'] }]) {
        const set = await load(tmp.dir, options);
        expect(found(set), rules).toEqual(
          only('acme: manifests/acme.yaml manifests/policies/p.yaml'),
        );
        expect(set.orgs[0]?.policies?.map((doc) => [doc.content, doc.description])).toEqual([
          [POLICY, undefined],
        ]);
        // The description is left out when the manifest does.
        expect(set.orgs[0]?.policies?.[0]).not.toHaveProperty('description');
      }
    }
  });

  it('does not read a named file as a manifest even when the manifest naming it has another error', async () => {
    // The policy file alone, read as a manifest, would say: no org, unknown keys.
    const tmp = await tree({
      'manifests/acme.yaml': `org: acme\npolicies:\n  - name: p\n    file: p.yaml\n    colour: red\nenvironments: []\n`,
      'manifests/p.yaml': POLICY,
    });
    expect(found(await load(tmp.dir)).problems).toEqual([
      'manifests/acme.yaml:5:5 policies[0].colour: unknown key "colour" (allowed: name, description, file)',
    ]);
  });

  it('takes out only the named files: another *.yaml that is not a manifest is skipped, an error with strict', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest(entry('prod-requirements', 'p.yaml')),
      'manifests/p.yaml': POLICY,
      'manifests/stray.yaml': POLICY,
    });
    // The policy file is the org's, not a file skipped; the stray one is skipped, not an error.
    const set = found(await load(tmp.dir));
    expect(set.problems).toEqual([]);
    expect(set.skipped).toEqual([
      'manifests/stray.yaml: not a manifest: no org and no environments',
    ]);
    const strict = found(await load(tmp.dir, { strict: true }));
    expect(strict.skipped).toEqual([]);
    expect(strict.problems).toContain('manifests/stray.yaml:1:1 org: is required but missing');
    expect(strict.problems.every((line) => line.startsWith('manifests/stray.yaml:'))).toBe(true);
  });

  it.each([
    ['a missing file', 'nope.yaml', {}, 'does not exist (looked for manifests/nope.yaml)'],
    ['a folder', 'policies', 'mkdir', 'is a folder (manifests/policies), not a file'],
    [
      'a path escaping the root',
      '../outside.yaml',
      { 'outside.yaml': POLICY },
      'is outside the manifests root (ROOT); a policy file must lie inside it',
    ],
    [
      'an absolute path',
      'ABSOLUTE',
      { 'manifests/abs.yaml': POLICY },
      'must be a path relative to this manifest, inside the manifests root',
    ],
    [
      'a symbolic link leading out of the root',
      'link.yaml',
      'symlink',
      'leads outside the manifests root (through a symbolic link, to OUTSIDE); a policy file must lie inside it',
    ],
    [
      'a FIFO',
      'fifo.yaml',
      'mkfifo',
      'is a FIFO (named pipe), not a regular file (manifests/fifo.yaml)',
    ],
    [
      'an empty file',
      'empty.yaml',
      { 'manifests/empty.yaml': '\n  \n' },
      "is empty; it must hold the policy's YAML",
    ],
    [
      'a binary file',
      'bin.yaml',
      { 'manifests/bin.yaml': Buffer.from([0x61, 0x00, 0x62]) },
      AS_MANIFEST('binary file (contains NUL bytes), not YAML'),
    ],
    [
      'a file that is not UTF-8',
      'latin1.yaml',
      { 'manifests/latin1.yaml': Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]) },
      AS_MANIFEST('not valid UTF-8 text; save the file as UTF-8'),
    ],
    [
      'the manifest itself',
      'acme.yaml',
      {},
      'is this manifest itself; name the file holding the policy',
    ],
    [
      'another manifest',
      'beta.yaml',
      {
        'manifests/beta.yaml':
          'org: beta\nenvironments:\n  - {name: x, type: K8S, description: x}\n',
      },
      `is org "beta"'s manifest; a manifest is never a policy: name the file holding the policy's YAML`,
    ],
    [
      'a manifest that does not parse',
      'broken.yaml',
      { 'manifests/broken.yaml': 'rules: [x\n' },
      AS_MANIFEST(
        'YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ),
    ],
  ] as const)(
    '%s is an error at the file value, and holds the org back',
    async (_what, file, setup, message) => {
      const tmp = await tree(typeof setup === 'string' ? {} : setup);
      const written = file === 'ABSOLUTE' ? tmp.path('manifests/abs.yaml') : file;
      await tmp.write('manifests/acme.yaml', manifest(entry('prod-requirements', written)));
      if (setup === 'mkdir') await mkdir(tmp.path('manifests/policies'));
      if (setup === 'mkfifo') execFileSync('mkfifo', [tmp.path('manifests/fifo.yaml')]);
      if (setup === 'symlink') {
        await tmp.write('outside.yaml', POLICY);
        await symlink(tmp.path('outside.yaml'), tmp.path('manifests/link.yaml'));
      }
      const set = await load(tmp.dir);
      const acme = set.orgs.find((o) => o.org === 'acme');
      expect(acme?.environments).toEqual([]);
      expect(acme?.policies ?? []).toEqual([]);
      const expected = message
        .replace('ROOT', tmp.path('manifests'))
        .replace('OUTSIDE', tmp.path('outside.yaml'));
      expect(acme?.problems.map(formatProblem)).toEqual([
        `manifests/acme.yaml:4:11 policies[0].file: policy file ${JSON.stringify(written)}: ${expected}`,
      ]);
      // Another manifest named as a policy file stays a manifest.
      expect(set.orgs.map((o) => o.org)).toEqual(
        file === 'beta.yaml' ? ['acme', 'beta'] : ['acme'],
      );
    },
  );

  it('bounds a policy file by --max-file-bytes', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest(entry('prod-requirements', 'p/big.yaml')),
      'manifests/p/big.yaml': `a: ${'x'.repeat(500)}\n`,
    });
    const set = await load(tmp.dir, { maxFileBytes: 400 });
    expect(set.orgs[0]?.problems.map((p) => p.message)).toEqual([
      `policy file "p/big.yaml": ${AS_MANIFEST('file is larger than the limit of 400 bytes (--max-file-bytes)')}`,
    ]);
  });

  it('refuses one policy document declared twice in an org, naming both places, and one listed twice in a document', async () => {
    const tmp = await tree({
      'manifests/a.yaml': manifest(entry('prod-requirements', 'p.yaml')),
      'manifests/b.yaml': `org: acme\npolicies:\n${entry('other', 'p.yaml')}${entry('prod-requirements', 'p.yaml')}environments: []\n`,
      'manifests/c.yaml': `org: beta\npolicies:\n${entry('p', 'p.yaml')}${entry('p', 'p.yaml')}environments: []\n`,
      'manifests/p.yaml': POLICY,
    });
    expect(found(await load(tmp.dir)).problems).toEqual([
      'manifests/b.yaml:5:5 policies[1].name: policy document "prod-requirements" of org "acme" is declared twice: here and at manifests/a.yaml:3:5',
      'manifests/c.yaml:5:11 policies[1].name: policy document "p" is listed twice',
    ]);
  });
});
