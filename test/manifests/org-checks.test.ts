/**
 * `renamed_from` and `prune` across the files of an org, through the real loader on real files:
 * what an org's manifest holds, and the problems only the whole org can show, each at its file,
 * line and column.
 */
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/core/validation.ts';
import { load, tree } from './tree.ts';

/** Loads `files` (below manifests/), which hold no problem outside an org, and finds an org. */
async function orgsOf(files: Record<string, string>) {
  const entries = Object.entries(files).map(([name, text]) => [`manifests/${name}`, text]);
  const set = await load((await tree(Object.fromEntries(entries))).dir);
  expect(set.unattributed).toEqual([]);
  const org = (name: string) => set.orgs.find((o) => o.org === name);
  return { org, problems: (name: string) => org(name)?.problems.map(formatProblem) };
}

describe('an org manifest', () => {
  it('carries renamed_from as renamedFrom and the declared prune with its place', async () => {
    const { org } = await orgsOf({
      'a.yaml':
        'org: acme\nenvironments:\n  - name: web\n    renamed_from: api\n    type: K8S\n    description: w\n',
      'b.yaml':
        'org: acme\nprune: true\nenvironments:\n  - {name: db, type: S3, description: d, tags: {team: data}}\n',
      // A second document that agrees is no problem; the first declaration is the org's.
      'c.yaml': 'org: acme\nenvironments: []\nprune: true\n',
      'd.yaml':
        'org: beta\nenvironments:\n  - {name: x, type: S3, description: d, renamed_from: y}\n',
      // prune: false leaves the ownership tag's key to the manifests.
      'e.yaml':
        'org: gamma\nprune: false\nenvironments:\n  - {name: x, type: S3, description: d, tags: {managed-by: me}}\n',
    });
    const acme = org('acme');
    expect(acme?.problems).toEqual([]);
    expect(acme?.prune).toEqual({
      value: true,
      file: 'manifests/b.yaml',
      line: 2,
      column: 1,
      path: 'prune',
    });
    expect(acme?.environments.map((env) => [env.name, env.renamedFrom])).toEqual([
      ['db', undefined],
      ['web', 'api'],
    ]);
    expect(org('beta')?.environments[0]?.renamedFrom).toBe('y');
    expect(org('beta')?.prune).toBeUndefined();
    expect(org('gamma')?.problems).toEqual([]);
    expect(org('gamma')?.prune).toMatchObject({ value: false, file: 'manifests/e.yaml' });
  });
});

describe('prune across documents', () => {
  it('refuses documents that disagree, at the second naming the first, and keeps no prune', async () => {
    const { org, problems } = await orgsOf({
      'a.yaml': 'org: acme\nprune: true\nenvironments: []\n',
      'b.yaml':
        'org: acme\nenvironments:\n  - {name: web, type: S3, description: w}\n---\norg: acme\nprune: true\nenvironments: []\n---\norg: acme\nenvironments: []\nprune: false\n',
      'c.yaml': 'org: beta\nprune: false\nenvironments: []\n',
    });
    expect(problems('acme')).toEqual([
      'manifests/b.yaml:11:1 prune: prune of org "acme" is false here and true at manifests/a.yaml:2:1: every document of the org that declares prune must say the same; make them agree, or declare it in one document only',
    ]);
    // An org with problems is left alone: no environments, and no prune to read as "archive all".
    expect(org('acme')?.environments).toEqual([]);
    expect(org('acme')?.prune).toBeUndefined();
    expect(org('beta')?.problems).toEqual([]);
  });

  it("refuses the ownership tag's key while prune is on, at the key", async () => {
    const { org, problems } = await orgsOf({
      'a.yaml': 'org: acme\nprune: true\nenvironments: []\n',
      'b.yaml':
        'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n    tags:\n      team: web\n      managed-by: someone\n  - {name: ok, type: S3, description: d, tags: {managed: x}}\n',
    });
    expect(problems('acme')).toEqual([
      `manifests/b.yaml:8:7 environments[0].tags["managed-by"]: tag "managed-by" of environment "web" is envsync's own while org "acme" has prune: true (at manifests/a.yaml:2:1): envsync sets managed-by: envsync/acme on the environments it creates or updates, to mark those it owns and may archive; remove the key from tags, or rename it`,
    ]);
    expect(org('acme')?.environments).toEqual([]);
  });
});

describe('renames across files', () => {
  it('refuses two environments renamed from one name, naming both renamed_from values', async () => {
    const { org, problems } = await orgsOf({
      'a.yaml':
        'org: acme\nenvironments:\n  - name: web\n    renamed_from: old\n    type: K8S\n    description: w\n',
      'b.yaml':
        'org: acme\nenvironments:\n  - name: api\n    type: K8S\n    description: &d a\n  - name: www\n    type: K8S\n    description: *d\n    renamed_from: old\n',
    });
    expect(problems('acme')).toEqual([
      'manifests/b.yaml:9:19 environments[1].renamed_from: environment "www" of org "acme" is renamed from "old", and so is environment "web" at manifests/a.yaml:4:19: only one environment can take over "old"; keep renamed_from on the one that was "old", and remove it from the other',
    ]);
    expect(org('acme')?.environments).toEqual([]);
  });

  it('refuses a rename from a name the org declares, valid document or not', async () => {
    const { problems } = await orgsOf({
      'a.yaml':
        'org: acme\nenvironments:\n  - name: web\n    renamed_from: api\n    type: K8S\n    description: w\n  - {name: www, type: S3, description: d, renamed_from: legacy}\n',
      'b.yaml': 'org: acme\nenvironments:\n  - name: api\n    type: K8S\n    description: a\n',
      // A document with a problem of its own still declares its names.
      'c.yaml': 'org: acme\nenvironments:\n  - name: legacy\n    type: k8s\n    description: l\n',
    });
    const takes = (name: string, from: string, at: string) =>
      `environment "${name}" of org "acme" is renamed from "${from}", which the org also declares, at manifests/${at}: the rename would take that environment's name away; if "${from}" is the environment being renamed, remove its entry, else remove renamed_from`;
    expect(problems('acme')).toEqual([
      expect.stringMatching(
        /^manifests\/c\.yaml:4:11 environments\[0\]\.type: "k8s" is not one of/,
      ),
      `manifests/a.yaml:4:19 environments[0].renamed_from: ${takes('web', 'api', 'b.yaml:3:5')}`,
      `manifests/a.yaml:7:57 environments[1].renamed_from: ${takes('www', 'legacy', 'c.yaml:3:5')}`,
    ]);
  });

  it('leaves other orgs alone: a rename from a name another org declares is fine', async () => {
    const { org } = await orgsOf({
      'a.yaml':
        'org: acme\nenvironments:\n  - {name: web, type: S3, description: w, renamed_from: api}\n',
      'b.yaml':
        'org: beta\nenvironments:\n  - {name: api, type: S3, description: a, renamed_from: old}\n  - {name: web, type: S3, description: w, renamed_from: older}\n',
    });
    expect(org('acme')?.problems).toEqual([]);
    expect(org('beta')?.problems).toEqual([]);
    expect(org('beta')?.environments.map((env) => env.renamedFrom)).toEqual(['old', 'older']);
  });
});
