/**
 * `renamed_from` on an environment and `prune` at a document's root, as one file reads them: what
 * the parse gives, and every problem with its file, line and column.
 */
import { describe, expect, it } from 'vitest';
import { formatProblem, parseManifest } from '../../src/manifests/parse.ts';

const FILE = 'manifests/acme.yaml';
const messages = (text: string) => parseManifest(text, FILE).problems.map(formatProblem);

const web = (extra: string) =>
  `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n${extra}`;

describe('renamed_from', () => {
  it('reads into renamedFrom, and leaves it out where not declared', async () => {
    const text =
      'org: acme\nenvironments:\n' +
      '  - name: web\n    renamed_from: api.1\n    type: K8S\n    description: w\n' +
      '  - {name: db, type: S3, description: d}\n';
    const parsed = parseManifest(text, FILE);
    expect(parsed.documents[0]?.environments[0]?.source).toMatchObject({ line: 3, column: 5 });
    expect(parsed.problems).toEqual([]);
    const [renamed, other] = parsed.documents[0]?.environments ?? [];
    expect(renamed).toMatchObject({ name: 'web', renamedFrom: 'api.1', type: 'K8S' });
    expect(other?.name).toBe('db');
    expect(other !== undefined && 'renamedFrom' in other).toBe(false);
    // Not a field: no field of the environment holds it.
    expect(Object.values({ ...renamed, renamedFrom: 0 })).not.toContain('api.1');
  });

  it("is refused as the environment's own name, at the value", async () => {
    const text = web('    renamed_from: web\n');
    expect(messages(text)).toEqual([
      "manifests/acme.yaml:6:19 environments[0].renamed_from: is the environment's own name: remove renamed_from, or set it to the name the environment had before the rename",
    ]);
    // In a flow mapping too, at the value.
    expect(
      messages(
        'org: acme\nenvironments:\n  - {name: a, renamed_from: a, type: S3, description: d}\n',
      ),
    ).toEqual([
      expect.stringMatching(
        /^manifests\/acme\.yaml:3:29 environments\[0\]\.renamed_from: is the environment's own name/,
      ),
    ]);
  });

  it('takes a valid name only, with the words of the name rule', async () => {
    expect(
      messages(
        'org: acme\nenvironments:\n' +
          '  - {name: a, type: S3, description: d, renamed_from: "x y"}\n' +
          '  - {name: b, type: S3, description: d, renamed_from: 12}\n' +
          '  - {name: c, type: S3, description: d, renamed_from: null}\n' +
          '  - {name: e, type: S3, description: d, renamed_from: [x]}\n',
      ),
    ).toEqual([
      'manifests/acme.yaml:3:55 environments[0].renamed_from: "x y" is not a valid name: it must start with a letter or number, and only contain letters, numbers, ".", "-" and "_"',
      'manifests/acme.yaml:4:55 environments[1].renamed_from: expected a string, got number 12',
      'manifests/acme.yaml:5:55 environments[2].renamed_from: expected a string, got null',
      'manifests/acme.yaml:6:55 environments[3].renamed_from: expected a string, got a list',
    ]);
  });

  it('is suggested for a typo, and named where it belongs when written at the root', async () => {
    expect(messages(web('    rename_from: api\n'))).toEqual([
      'manifests/acme.yaml:6:5 environments[0].rename_from: unknown key "rename_from" (did you mean "renamed_from"?)',
    ]);
    expect(messages(web('    colour: red\n'))).toEqual([
      'manifests/acme.yaml:6:5 environments[0].colour: unknown key "colour" (allowed: name, renamed_from, type, description, include_scaling, policies, require_provenance, included_environments, tags)',
    ]);
    expect(messages('org: acme\nrenamed_from: api\nenvironments: []\n')).toEqual([
      'manifests/acme.yaml:2:1 renamed_from: unknown key "renamed_from" here: it is a key of an environment, under environments',
    ]);
  });
});

describe('prune', () => {
  it('is read with the value and where its key is', async () => {
    const text = `prune: true\n${web('')}`;
    const parsed = parseManifest(text, FILE);
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents[0]?.prune).toEqual({ value: true, line: 1, column: 1 });
    expect(parsed.documents[0]?.environments.map((env) => env.name)).toEqual(['web']);
    // In a flow mapping, in a later document of the file: the key's own place.
    const flow = parseManifest(
      'org: other\nenvironments: []\n---\n{org: acme,  prune: false, environments: []}\n',
      FILE,
    );
    expect(flow.documents.map((doc) => doc.prune)).toEqual([
      undefined,
      { value: false, line: 4, column: 14 },
    ]);
    // A document without it has none.
    expect(parseManifest(web(''), FILE).documents[0]?.prune).toBeUndefined();
  });

  it.each([
    [
      'yes',
      'expected true or false, got the string "yes" (booleans are lowercase true or false; True, yes, on are strings)',
    ],
    [
      'True',
      'expected true or false, got the string "True" (booleans are lowercase true or false; True, yes, on are strings)',
    ],
    [
      '"true"',
      'expected true or false, got the string "true" (booleans are lowercase true or false; True, yes, on are strings)',
    ],
    ['1', 'expected true or false, got number 1'],
    ['null', 'expected true or false, got null'],
    ['', 'expected true or false, got null'],
    ['[true]', 'expected true or false, got a list'],
  ])('takes true or false only: prune: %s is an error at its value', async (value, message) => {
    const parsed = parseManifest(`org: acme\nprune: ${value}\nenvironments: []\n`, FILE);
    expect(parsed.documents).toEqual([]);
    expect(parsed.problems.map(formatProblem)).toEqual([
      `manifests/acme.yaml:2:8 prune: ${message}`,
    ]);
    expect(parsed.problems[0]?.org).toBe('acme');
  });

  it('is suggested for a typo at the root, and named where it belongs under an environment', async () => {
    expect(messages('org: acme\nprnue: true\nenvironments: []\n')).toEqual([
      'manifests/acme.yaml:2:1 prnue: unknown key "prnue" (did you mean "prune"?)',
    ]);
    expect(messages('org: acme\nbase: 1\nenvironments: []\n')).toEqual([
      'manifests/acme.yaml:2:1 base: unknown key "base" (allowed: org, prune, suspend, policies, environments)',
    ]);
    expect(messages(web('    prune: true\n'))).toEqual([
      'manifests/acme.yaml:6:5 environments[0].prune: unknown key "prune" here: it is a key of the document itself, next to org',
    ]);
  });
});
