/**
 * Manifests among other files: the root's `.envsyncignore` (gitignore syntax) and `--exclude`
 * leave files out, and a YAML file with neither org nor environments is skipped (an error with
 * `strict`). Real temporary folders, the real loader.
 */
import { symlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests, type ManifestSet } from '../../src/manifests/load.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const manifest = (org: string, env = 'prod') =>
  `org: ${org}\nenvironments:\n  - name: ${env}\n    type: K8S\n    description: d\n`;

/** Not YAML at all: read as a manifest, it would be a problem. */
const BROKEN = 'org: [unclosed\n';

const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n';

const load = (options: { exclude?: string[]; strict?: boolean; paths?: string[] } = {}) =>
  loadManifests({ root: 'manifests', cwd: tmp.dir, maxFileBytes: 1024 * 1024, ...options });

/** What a load found: each org with its files, the problems, and the files skipped. */
function found(set: ManifestSet) {
  return {
    orgs: set.orgs.map((org) => `${org.org}: ${org.files.join(' ')}`),
    problems: [...set.unattributed, ...set.orgs.flatMap((org) => org.problems)].map(
      (p) => `${p.file}:${p.line}:${p.column} ${p.path ? `${p.path}: ` : ''}${p.message}`,
    ),
    skipped: set.skipped.map((s) => `${s.file}: ${s.reason}`),
  };
}

describe('.envsyncignore at the manifests root', () => {
  it("leaves out what gitignore's syntax says: comments, folders, **, anchored patterns and negation", async () => {
    await tmp.write(
      'manifests/.envsyncignore',
      [
        '# Kubernetes objects and CI files live beside the manifests',
        '# old.yaml',
        'k8s/',
        '**/ci.yaml',
        '/top.yaml',
        '*.draft.yaml',
        '!keep.draft.yaml',
        '',
      ].join('\n'),
    );
    await tmp.write('manifests/acme.yaml', manifest('acme'));
    await tmp.write('manifests/k8s/deploy.yaml', BROKEN);
    await tmp.write('manifests/teams/k8s/deploy.yaml', BROKEN);
    await tmp.write('manifests/ci.yaml', BROKEN);
    await tmp.write('manifests/teams/deep/ci.yaml', BROKEN);
    await tmp.write('manifests/top.yaml', BROKEN);
    // Anchored: only the root's top.yaml is left out.
    await tmp.write('manifests/teams/top.yaml', manifest('beta'));
    await tmp.write('manifests/x.draft.yaml', BROKEN);
    await tmp.write('manifests/teams/keep.draft.yaml', manifest('gamma'));
    // A comment line is not a pattern.
    await tmp.write('manifests/# old.yaml', manifest('delta'));
    expect(found(await load())).toEqual({
      orgs: [
        'acme: manifests/acme.yaml',
        'beta: manifests/teams/top.yaml',
        'delta: manifests/# old.yaml',
        'gamma: manifests/teams/keep.draft.yaml',
      ],
      problems: [],
      skipped: [],
    });
  });

  it('cannot take back a file whose folder is left out (as git), but can below `dir/*`', async () => {
    await tmp.write('manifests/k8s/keep.yaml', manifest('acme'));
    await tmp.write('manifests/k8s/other.yaml', BROKEN);
    await tmp.write('manifests/.envsyncignore', 'k8s/\n!k8s/keep.yaml\n');
    expect(found(await load()).orgs).toEqual([]);
    await tmp.write('manifests/.envsyncignore', 'k8s/*\n!k8s/keep.yaml\n');
    expect(found(await load())).toEqual({
      orgs: ['acme: manifests/k8s/keep.yaml'],
      problems: [],
      skipped: [],
    });
  });

  it('matches case-sensitively, and only the root one is read (a nested one is a hidden file)', async () => {
    await tmp.write('manifests/.envsyncignore', 'K8S/\n');
    await tmp.write('manifests/k8s/acme.yaml', manifest('acme'));
    await tmp.write('manifests/teams/.envsyncignore', '*.yaml\n');
    await tmp.write('manifests/teams/beta.yaml', manifest('beta'));
    expect(found(await load()).orgs).toEqual([
      'acme: manifests/k8s/acme.yaml',
      'beta: manifests/teams/beta.yaml',
    ]);
  });

  it('is a problem when it cannot be read, and its lines are then not applied', async () => {
    await tmp.write('manifests/acme.yaml', manifest('acme'));
    await tmp.write('manifests/.envsyncignore', Buffer.from([0x6b, 0x38, 0x73, 0x00]));
    expect(found(await load()).problems).toEqual([
      'manifests/.envsyncignore:1:1 binary file (contains NUL bytes), not YAML',
    ]);
    await tmp.write('manifests/.envsyncignore', 'x'.repeat(2048));
    const small = await loadManifests({ root: 'manifests', cwd: tmp.dir, maxFileBytes: 1024 });
    expect(found(small).problems).toEqual([
      'manifests/.envsyncignore:1:1 file is larger than the limit of 1024 bytes (--max-file-bytes)',
    ]);
  });

  it('leaves out a symbolic link without following or reporting it, and walks its folder by the path kept', async () => {
    const outside = await tempDir();
    try {
      await outside.write('elsewhere.yaml', manifest('zeta'));
      await tmp.write('manifests/shared/acme.yaml', manifest('acme'));
      await symlink(outside.dir, tmp.path('manifests/vendor'));
      await symlink(tmp.path('manifests/shared'), tmp.path('manifests/a-link'));
      // Without a rule, the link out of the root is reported, and the folder is walked once.
      expect(found(await load()).problems).toEqual([
        'manifests/vendor:1:1 symlink points outside the manifests root: not followed',
      ]);
      await tmp.write('manifests/.envsyncignore', 'vendor\na-link/\n');
      expect(found(await load())).toEqual({
        orgs: ['acme: manifests/shared/acme.yaml'],
        problems: [],
        skipped: [],
      });
    } finally {
      await outside.cleanup();
    }
  });
});

describe('--exclude and named PATHs', () => {
  it('applies without an ignore file; a folder given as a PATH has its own, a file given is read whatever the rules', async () => {
    await tmp.write('manifests/acme.yaml', manifest('acme'));
    await tmp.write('manifests/ci/pipeline.yaml', BROKEN);
    expect(found(await load({ exclude: ['/ci/'] })).problems).toEqual([]);
    await tmp.write('manifests/.envsyncignore', 'ci/\n');
    const given = await load({ paths: ['manifests', 'manifests/ci/pipeline.yaml'] });
    expect(given.orgs.map((org) => org.org)).toEqual(['acme']);
    expect(found(given).problems).toEqual([
      'manifests/ci/pipeline.yaml:2:1 YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });
});

describe('YAML that is not a manifest', () => {
  it('is skipped when no document has org or environments; a document with one of them is still a problem', async () => {
    await tmp.write('manifests/acme.yaml', manifest('acme'));
    await tmp.write('manifests/k8s/config.yaml', `${CONFIG_MAP}---\n# a comment\n---\n- a\n- b\n`);
    await tmp.write('manifests/ci.yml', 'on: [push]\njobs:\n  build:\n    runs-on: x\n');
    await tmp.write('manifests/note.yaml', 'just a line of text\n');
    await tmp.write('manifests/half-org.yaml', 'org: beta\n');
    await tmp.write('manifests/half-envs.yaml', 'environments: []\n');
    // One manifest document makes the file a manifest: the other document is a problem in it.
    await tmp.write('manifests/mixed.yaml', `${manifest('gamma')}---\n${CONFIG_MAP}`);
    const set = await load();
    expect(set.fileCount).toBe(4);
    expect(found(set)).toEqual({
      orgs: [
        'acme: manifests/acme.yaml',
        'beta: manifests/half-org.yaml',
        'gamma: manifests/mixed.yaml',
      ],
      problems: [
        'manifests/half-envs.yaml:1:1 org: is required but missing',
        'manifests/mixed.yaml:7:1 org: is required but missing',
        'manifests/mixed.yaml:7:1 environments: is required but missing',
        'manifests/mixed.yaml:7:1 apiVersion: unknown key "apiVersion" (allowed: org, prune, suspend, policies, environments)',
        'manifests/mixed.yaml:8:1 kind: unknown key "kind" (allowed: org, prune, suspend, policies, environments)',
        'manifests/mixed.yaml:9:1 metadata: unknown key "metadata" (allowed: org, prune, suspend, policies, environments)',
        'manifests/mixed.yaml:11:1 data: unknown key "data" (allowed: org, prune, suspend, policies, environments)',
        // The org's own problem, after those that belong to no org.
        'manifests/half-org.yaml:1:1 environments: is required but missing',
      ],
      skipped: [
        'manifests/ci.yml: not a manifest: no org and no environments',
        'manifests/k8s/config.yaml: not a manifest: no org and no environments',
        'manifests/note.yaml: not a manifest: no org and no environments',
      ],
    });
  });

  it('does not take a manifest written as a list for other YAML', async () => {
    await tmp.write('manifests/list.yaml', '- org: beta\n  environments: []\n');
    await tmp.write('manifests/plain-list.yaml', '- one\n- two\n');
    expect(found(await load())).toEqual({
      orgs: [],
      problems: [
        'manifests/list.yaml:1:1 expected a mapping with "org" and "environments", got a list',
      ],
      skipped: ['manifests/plain-list.yaml: not a manifest: no org and no environments'],
    });
  });

  it('is not counted among the files: an empty file is a manifest file that declares nothing', async () => {
    await tmp.write('manifests/empty.yaml', '# nothing yet\n');
    await tmp.write('manifests/k8s.yaml', CONFIG_MAP);
    const set = await load();
    expect(set.fileCount).toBe(1);
    expect(found(set)).toEqual({
      orgs: [],
      problems: [],
      skipped: ['manifests/k8s.yaml: not a manifest: no org and no environments'],
    });
  });
});

describe('policy files', () => {
  const POLICY = '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts: {}\n';
  const withPolicy = `org: acme\npolicies:\n  - name: p\n    file: policies/p.yaml\nenvironments: []\n`;

  it('are read as policies, never as manifests nor as files skipped, ignored or not', async () => {
    await tmp.write('manifests/acme.yaml', withPolicy);
    await tmp.write('manifests/policies/p.yaml', POLICY);
    for (const rules of ['', 'policies/\n', '*.yaml\n!/acme.yaml\n']) {
      await tmp.write('manifests/.envsyncignore', rules);
      const set = await load();
      expect(found(set), rules).toEqual({
        orgs: ['acme: manifests/acme.yaml manifests/policies/p.yaml'],
        problems: [],
        skipped: [],
      });
      expect(set.orgs[0]?.policies?.map((doc) => doc.content)).toEqual([POLICY]);
      // With strict, as without: never read as a manifest.
      expect(found(await load({ strict: true })).problems, rules).toEqual([]);
    }
  });
});
