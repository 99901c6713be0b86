import { symlink } from 'node:fs/promises';
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

const env = (name: string, type = 'K8S') =>
  `  - name: ${name}\n    type: ${type}\n    description: ${name}\n`;
const load = (root = 'manifests', maxFileBytes = 1024 * 1024) =>
  loadManifests({ root, cwd: tmp.dir, maxFileBytes });

describe('loadManifests', () => {
  it('reads *.yaml and *.yml at any depth, merges files of one org, skips hidden files and folders', async () => {
    await tmp.write('manifests/acme.yaml', `org: acme\nenvironments:\n${env('prod')}`);
    await tmp.write(
      'manifests/teams/deep/acme-more.yml',
      `org: acme\nenvironments:\n${env('dev')}`,
    );
    await tmp.write('manifests/beta.yaml', `org: beta\nenvironments:\n${env('x')}`);
    await tmp.write('manifests/.hidden.yaml', 'not: valid: yaml: [');
    await tmp.write('manifests/.git/config.yaml', 'garbage: [');
    await tmp.write('manifests/README.md', '# not a manifest');
    const set = await load();
    expect(set.unattributed).toEqual([]);
    expect(set.fileCount).toBe(3);
    expect(set.orgs.map((o) => [o.org, o.environments.map((e) => e.name)])).toEqual([
      ['acme', ['dev', 'prod']],
      ['beta', ['x']],
    ]);
  });

  it('names both places when one org declares an environment twice, in any document of a file or in one list, and holds only that org', async () => {
    await tmp.write(
      'manifests/a.yaml',
      `org: beta\nenvironments:\n${env('x')}---\norg: acme\nenvironments:\n${env('dev')}${env('prod')}`,
    );
    await tmp.write('manifests/b.yaml', `org: acme\nenvironments:\n${env('qa')}${env('prod')}`);
    await tmp.write(
      'manifests/c.yaml',
      `org: gamma\nenvironments:\n${env('a')}${env('b')}${env('a')}`,
    );
    const set = await load();
    const messages = (org: string) =>
      set.orgs
        .find((o) => o.org === org)
        ?.problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.path}: ${p.message}`);
    expect(messages('acme')).toEqual([
      'manifests/b.yaml:6:5 environments[1].name: environment "prod" of org "acme" is declared twice: here and at manifests/a.yaml:12:5',
    ]);
    expect(messages('gamma')).toEqual([
      'manifests/c.yaml:9:5 environments[2].name: environment "a" of org "gamma" is declared twice: here and at manifests/c.yaml:3:5',
    ]);
    expect(set.orgs.find((o) => o.org === 'acme')?.environments).toEqual([]);
    expect(set.orgs.find((o) => o.org === 'beta')?.environments).toHaveLength(1);
  });

  it('follows symlinks inside the root, refuses those pointing outside, and survives loops', async () => {
    await tmp.write('manifests/real/acme.yaml', `org: acme\nenvironments:\n${env('prod')}`);
    await tmp.write('outside/evil.yaml', `org: evil\nenvironments:\n${env('x')}`);
    await symlink(tmp.path('manifests/real'), tmp.path('manifests/alias'));
    await symlink(tmp.path('outside/evil.yaml'), tmp.path('manifests/evil.yaml'));
    await symlink(tmp.path('outside'), tmp.path('manifests/outside-dir'));
    await symlink(tmp.path('manifests'), tmp.path('manifests/real/loop'));
    await symlink(tmp.path('manifests/self.yaml'), tmp.path('manifests/self.yaml'));
    const set = await load();
    expect(set.orgs.map((o) => o.org)).toEqual(['acme']);
    expect(set.orgs[0]?.environments.map((e) => e.name)).toEqual(['prod']);
    const messages = set.unattributed.map((p) => `${p.file}: ${p.message}`).sort();
    expect(messages).toEqual([
      'manifests/evil.yaml: symlink points outside the manifests root: not followed',
      'manifests/outside-dir: symlink points outside the manifests root: not followed',
      'manifests/self.yaml: symlink loop: not followed',
    ]);
  });

  it('refuses files over the size limit, binary files and invalid UTF-8, and drops a BOM', async () => {
    await tmp.write('manifests/big.yaml', `org: big\nenvironments: []\n# ${'x'.repeat(200)}\n`);
    await tmp.write('manifests/bin.yaml', Buffer.from([0x6f, 0x72, 0x67, 0x00, 0x01]));
    await tmp.write(
      'manifests/latin1.yaml',
      Buffer.from('org: caf\xe9\nenvironments: []\n', 'latin1'),
    );
    await tmp.write('manifests/bom.yaml', `\ufefforg: bom\nenvironments:\n${env('prod')}`);
    const set = await load('manifests', 100);
    expect(set.orgs.map((o) => o.org)).toEqual(['bom']);
    expect(set.unattributed.map((p) => `${p.file}: ${p.message}`)).toEqual([
      'manifests/big.yaml: file is larger than the limit of 100 bytes (--max-file-bytes)',
      'manifests/bin.yaml: binary file (contains NUL bytes), not YAML',
      'manifests/latin1.yaml: not valid UTF-8 text; save the file as UTF-8',
    ]);
  });

  it('throws ENOENT for a missing root, for the command to explain', async () => {
    await expect(load('nope')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
