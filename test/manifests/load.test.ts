import { symlink } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { found, load, tree } from './tree.ts';

const env = (name: string, type = 'K8S') =>
  `  - name: ${name}\n    type: ${type}\n    description: ${name}\n`;
const manifest = (org: string, ...names: string[]) =>
  `org: ${org}\nenvironments:\n${names.map((name) => env(name)).join('')}`;

describe('loadManifests', () => {
  it('reads *.yaml and *.yml at any depth, merges files of one org, skips hidden files and folders', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest('acme', 'prod'),
      'manifests/teams/deep/acme-more.yml': manifest('acme', 'dev'),
      'manifests/beta.yaml': manifest('beta', 'x'),
      'manifests/.hidden.yaml': 'not: valid: yaml: [',
      'manifests/.git/config.yaml': 'garbage: [',
      'manifests/README.md': '# not a manifest',
    });
    const set = await load(tmp.dir);
    expect(set.unattributed).toEqual([]);
    expect(set.fileCount).toBe(3);
    expect(set.orgs.map((o) => [o.org, o.environments.map((e) => e.name)])).toEqual([
      ['acme', ['dev', 'prod']],
      ['beta', ['x']],
    ]);
  });

  it('names both places when one org declares an environment twice, in any document of a file or in one list, and holds only that org', async () => {
    const tmp = await tree({
      'manifests/a.yaml': `${manifest('beta', 'x')}---\n${manifest('acme', 'dev', 'prod')}`,
      'manifests/b.yaml': manifest('acme', 'qa', 'prod'),
      'manifests/c.yaml': manifest('gamma', 'a', 'b', 'a'),
    });
    const set = await load(tmp.dir);
    expect(found(set).problems).toEqual([
      'manifests/b.yaml:6:5 environments[1].name: environment "prod" of org "acme" is declared twice: here and at manifests/a.yaml:12:5',
      'manifests/c.yaml:9:5 environments[2].name: environment "a" of org "gamma" is declared twice: here and at manifests/c.yaml:3:5',
    ]);
    const sizes = set.orgs.map((o) => [o.org, o.environments.length]);
    expect(sizes).toEqual([
      ['acme', 0],
      ['beta', 1],
      ['gamma', 0],
    ]);
  });

  it('follows symlinks inside the root, refuses those pointing outside, and survives loops', async () => {
    const tmp = await tree({
      'manifests/real/acme.yaml': manifest('acme', 'prod'),
      'outside/evil.yaml': manifest('evil', 'x'),
    });
    await symlink(tmp.path('manifests/real'), tmp.path('manifests/alias'));
    await symlink(tmp.path('outside/evil.yaml'), tmp.path('manifests/evil.yaml'));
    await symlink(tmp.path('outside'), tmp.path('manifests/outside-dir'));
    await symlink(tmp.path('manifests'), tmp.path('manifests/real/loop'));
    await symlink(tmp.path('manifests/self.yaml'), tmp.path('manifests/self.yaml'));
    const set = await load(tmp.dir);
    expect(set.orgs.map((o) => [o.org, o.environments.map((e) => e.name)])).toEqual([
      ['acme', ['prod']],
    ]);
    expect(found(set).problems.sort()).toEqual([
      'manifests/evil.yaml:1:1 symlink points outside the manifests root: not followed',
      'manifests/outside-dir:1:1 symlink points outside the manifests root: not followed',
      'manifests/self.yaml:1:1 symlink loop: not followed',
    ]);
  });

  it('refuses files over the size limit, binary files and invalid UTF-8, and drops a BOM', async () => {
    const tmp = await tree({
      'manifests/big.yaml': `org: big\nenvironments: []\n# ${'x'.repeat(200)}\n`,
      'manifests/bin.yaml': Buffer.from([0x6f, 0x72, 0x67, 0x00, 0x01]),
      'manifests/latin1.yaml': Buffer.from('org: caf\xe9\nenvironments: []\n', 'latin1'),
      'manifests/bom.yaml': `\ufeff${manifest('bom', 'prod')}`,
    });
    const set = await load(tmp.dir, { maxFileBytes: 100 });
    expect(set.orgs.map((o) => o.org)).toEqual(['bom']);
    expect(found(set).problems).toEqual([
      'manifests/big.yaml:1:1 file is larger than the limit of 100 bytes (--max-file-bytes)',
      'manifests/bin.yaml:1:1 binary file (contains NUL bytes), not YAML',
      'manifests/latin1.yaml:1:1 not valid UTF-8 text; save the file as UTF-8',
    ]);
  });

  it('throws ENOENT for a missing root, for the command to explain', async () => {
    const tmp = await tree();
    await expect(load(tmp.dir, { root: 'nope' })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
