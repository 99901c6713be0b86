/**
 * Manifests among other files: the root's `.envsyncignore` (gitignore syntax) and `--exclude`
 * leave files out, and a YAML file with neither org nor environments is skipped (an error with
 * `strict`). Real temporary folders, the real loader.
 */
import { symlink } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { found, load, only, tree } from './tree.ts';

const manifest = (org: string, env = 'prod') =>
  `org: ${org}\nenvironments:\n  - name: ${env}\n    type: K8S\n    description: d\n`;
/** Not YAML at all: read as a manifest, it would be a problem. */
const BROKEN = 'org: [unclosed\n';
const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n';
const SKIPPED = 'not a manifest: no org and no environments';
const ROOT_KEYS = '(allowed: org, prune, suspend, policies, environments)';

describe('.envsyncignore at the manifests root', () => {
  it("leaves out what gitignore's syntax says: comments, folders, **, anchored patterns and negation", async () => {
    const tmp = await tree({
      'manifests/.envsyncignore':
        '# Kubernetes objects and CI files live beside the manifests\n# old.yaml\nk8s/\n**/ci.yaml\n/top.yaml\n*.draft.yaml\n!keep.draft.yaml\n',
      'manifests/acme.yaml': manifest('acme'),
      'manifests/k8s/deploy.yaml': BROKEN,
      'manifests/teams/k8s/deploy.yaml': BROKEN,
      'manifests/ci.yaml': BROKEN,
      'manifests/teams/deep/ci.yaml': BROKEN,
      'manifests/top.yaml': BROKEN,
      // Anchored: only the root's top.yaml is left out.
      'manifests/teams/top.yaml': manifest('beta'),
      'manifests/x.draft.yaml': BROKEN,
      'manifests/teams/keep.draft.yaml': manifest('gamma'),
      // A comment line is not a pattern.
      'manifests/# old.yaml': manifest('delta'),
    });
    expect(found(await load(tmp.dir))).toEqual(
      only(
        'acme: manifests/acme.yaml',
        'beta: manifests/teams/top.yaml',
        'delta: manifests/# old.yaml',
        'gamma: manifests/teams/keep.draft.yaml',
      ),
    );
  });

  it('cannot take back a file whose folder is left out (as git), but can below `dir/*`', async () => {
    const tmp = await tree({
      'manifests/k8s/keep.yaml': manifest('acme'),
      'manifests/k8s/other.yaml': BROKEN,
      'manifests/.envsyncignore': 'k8s/\n!k8s/keep.yaml\n',
    });
    expect(found(await load(tmp.dir)).orgs).toEqual([]);
    await tmp.write('manifests/.envsyncignore', 'k8s/*\n!k8s/keep.yaml\n');
    expect(found(await load(tmp.dir))).toEqual(only('acme: manifests/k8s/keep.yaml'));
  });

  it('matches case-sensitively, and only the root one is read (a nested one is a hidden file)', async () => {
    const tmp = await tree({
      'manifests/.envsyncignore': 'K8S/\n',
      'manifests/k8s/acme.yaml': manifest('acme'),
      'manifests/teams/.envsyncignore': '*.yaml\n',
      'manifests/teams/beta.yaml': manifest('beta'),
    });
    expect(found(await load(tmp.dir)).orgs).toEqual([
      'acme: manifests/k8s/acme.yaml',
      'beta: manifests/teams/beta.yaml',
    ]);
  });

  it('is a problem when it cannot be read, and its lines are then not applied', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest('acme'),
      'manifests/.envsyncignore': Buffer.from([0x6b, 0x38, 0x73, 0x00]),
    });
    expect(found(await load(tmp.dir)).problems).toEqual([
      'manifests/.envsyncignore:1:1 binary file (contains NUL bytes), not YAML',
    ]);
    await tmp.write('manifests/.envsyncignore', 'x'.repeat(2048));
    expect(found(await load(tmp.dir, { maxFileBytes: 1024 })).problems).toEqual([
      'manifests/.envsyncignore:1:1 file is larger than the limit of 1024 bytes (--max-file-bytes)',
    ]);
  });

  it('leaves out a symbolic link without following or reporting it, and walks its folder by the path kept', async () => {
    const outside = await tree({ 'elsewhere.yaml': manifest('zeta') });
    const tmp = await tree({ 'manifests/shared/acme.yaml': manifest('acme') });
    await symlink(outside.dir, tmp.path('manifests/vendor'));
    await symlink(tmp.path('manifests/shared'), tmp.path('manifests/a-link'));
    await tmp.write('manifests/.envsyncignore', 'vendor\na-link/\n');
    expect(found(await load(tmp.dir))).toEqual(only('acme: manifests/shared/acme.yaml'));
  });
});

describe('--exclude and named PATHs', () => {
  it('applies without an ignore file; a folder given as a PATH has its own, a file given is read whatever the rules', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest('acme'),
      'manifests/ci/pipeline.yaml': BROKEN,
    });
    expect(found(await load(tmp.dir, { exclude: ['/ci/'] })).problems).toEqual([]);
    await tmp.write('manifests/.envsyncignore', 'ci/\n');
    const given = await load(tmp.dir, { paths: ['manifests', 'manifests/ci/pipeline.yaml'] });
    expect(given.orgs.map((org) => org.org)).toEqual(['acme']);
    expect(found(given).problems).toEqual([
      'manifests/ci/pipeline.yaml:2:1 YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });
});

describe('YAML that is not a manifest', () => {
  it('is skipped when no document has org or environments; a document with one of them is still a problem', async () => {
    const tmp = await tree({
      'manifests/acme.yaml': manifest('acme'),
      'manifests/k8s/config.yaml': `${CONFIG_MAP}---\n# a comment\n---\n- a\n- b\n`,
      'manifests/ci.yml': 'on: [push]\njobs:\n  build:\n    runs-on: x\n',
      'manifests/note.yaml': 'just a line of text\n',
      'manifests/half-org.yaml': 'org: beta\n',
      'manifests/half-envs.yaml': 'environments: []\n',
      // One manifest document makes the file a manifest: the other document is a problem in it.
      'manifests/mixed.yaml': `${manifest('gamma')}---\n${CONFIG_MAP}`,
    });
    const set = await load(tmp.dir);
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
        `manifests/mixed.yaml:7:1 apiVersion: unknown key "apiVersion" ${ROOT_KEYS}`,
        `manifests/mixed.yaml:8:1 kind: unknown key "kind" ${ROOT_KEYS}`,
        `manifests/mixed.yaml:9:1 metadata: unknown key "metadata" ${ROOT_KEYS}`,
        `manifests/mixed.yaml:11:1 data: unknown key "data" ${ROOT_KEYS}`,
        // The org's own problem, after those that belong to no org.
        'manifests/half-org.yaml:1:1 environments: is required but missing',
      ],
      skipped: [
        `manifests/ci.yml: ${SKIPPED}`,
        `manifests/k8s/config.yaml: ${SKIPPED}`,
        `manifests/note.yaml: ${SKIPPED}`,
      ],
    });
  });

  it('does not take a manifest written as a list for other YAML', async () => {
    const tmp = await tree({
      'manifests/list.yaml': '- org: beta\n  environments: []\n',
      'manifests/plain-list.yaml': '- one\n- two\n',
    });
    expect(found(await load(tmp.dir))).toEqual({
      orgs: [],
      problems: [
        'manifests/list.yaml:1:1 expected a mapping with "org" and "environments", got a list',
      ],
      skipped: [`manifests/plain-list.yaml: ${SKIPPED}`],
    });
  });

  it('is not counted among the files: an empty file is a manifest file that declares nothing', async () => {
    const tmp = await tree({
      'manifests/empty.yaml': '# nothing yet\n',
      'manifests/k8s.yaml': CONFIG_MAP,
    });
    const set = await load(tmp.dir);
    expect(set.fileCount).toBe(1);
    expect(found(set)).toEqual({
      orgs: [],
      problems: [],
      skipped: [`manifests/k8s.yaml: ${SKIPPED}`],
    });
  });
});
