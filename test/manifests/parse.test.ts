import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/core/validation.ts';
import { parseManifest } from '../../src/manifests/parse.ts';

const messages = (text: string) =>
  parseManifest(text, 'manifests/acme.yaml').problems.map(formatProblem);

describe('parseManifest', () => {
  it('reads a valid manifest with sorted policies, where each environment is, and no default for a field left out', () => {
    const result = parseManifest(
      'org: acme\nenvironments:\n  - name: production\n    type: K8S\n    description: Prod\n    policies: [pci, baseline]\n',
      'acme.yaml',
    );
    expect(result.problems).toEqual([]);
    expect(result.documents).toEqual([
      {
        org: 'acme',
        environments: [
          {
            name: 'production',
            type: 'K8S',
            description: 'Prod',
            policies: ['baseline', 'pci'],
            source: { file: 'acme.yaml', document: 0, index: 0, line: 3, column: 5 },
          },
        ],
      },
    ]);
    expect(result.documents[0]?.environments[0]?.include_scaling).toBeUndefined();
  });

  it('names file, line, column and YAML path, with a did-you-mean for a wrong-case type', () => {
    expect(
      messages(
        'org: acme\nenvironments:\n  - name: production\n    type: k8s\n    description: x\n',
      ),
    ).toEqual([
      'manifests/acme.yaml:4:11 environments[0].type: "k8s" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "K8S"?)',
    ]);
  });

  it.each([
    ['Docker', 'docker'],
    ['ecs', 'ECS'],
    ['LAMBDA', 'lambda'],
    ['Cloud-Run', 'cloud-run'],
  ])('suggests the right case of a production type: %s -> %s', async (given, meant) => {
    expect(
      messages(`org: acme\nenvironments:\n  - name: a\n    type: ${given}\n    description: x\n`),
    ).toEqual([expect.stringContaining(`(did you mean "${meant}"?)`)]);
  });

  it('reads every production type and the fields managed only when declared', () => {
    const parsed = parseManifest(
      'org: acme.1\nenvironments:\n' +
        '  - {name: a_1, type: azure-apps, description: x, require_provenance: false}\n' +
        '  - {name: b, type: logical, description: y, included_environments: [a_1]}\n' +
        '  - {name: c, type: logical, description: z}\n',
      'manifests/acme.yaml',
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents[0]?.environments).toMatchObject([
      {
        name: 'a_1',
        type: 'azure-apps',
        require_provenance: false,
        included_environments: undefined,
      },
      { name: 'b', type: 'logical', require_provenance: undefined, included_environments: ['a_1'] },
      { name: 'c', require_provenance: undefined, included_environments: undefined },
    ]);
  });

  it('refuses members on another type, a member twice and a member that is not a name, with their places', () => {
    expect(
      messages(
        'org: acme\nenvironments:\n' +
          '  - name: web\n    type: K8S\n    description: w\n    included_environments: [db]\n' +
          '  - name: all\n    type: logical\n    description: a\n    included_environments: [web, "a b", web]\n',
      ),
    ).toEqual([
      'manifests/acme.yaml:6:28 environments[0].included_environments: is allowed only on type logical (this environment\'s type is "K8S")',
      'manifests/acme.yaml:10:34 environments[1].included_environments[1]: "a b" is not a valid name: it must start with a letter or number, and only contain letters, numbers, ".", "-" and "_"',
      'manifests/acme.yaml:10:41 environments[1].included_environments[2]: environment "web" is listed twice',
    ]);
  });

  it('reads tags as a mapping of strings with sorted keys', () => {
    const text =
      'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n' +
      '    tags:\n      team: platform\n      "1": one\n      env: ""\n      __proto__: odd\n';
    const result = parseManifest(text, 'acme.yaml');
    expect(result.problems).toEqual([]);
    const tags = result.documents[0]?.environments[0]?.tags ?? {};
    expect(Object.entries(tags).join(' ')).toBe('1,one __proto__,odd env, team,platform');
    const empty = parseManifest(
      'org: acme\nenvironments:\n  - {name: a, type: S3, description: x, tags: {}}\n',
      'acme.yaml',
    );
    expect(empty.documents[0]?.environments[0]?.tags).toEqual({});
  });

  it('refuses tags that are not strings, or break the limits, each at its place', () => {
    const long = 'k'.repeat(257);
    expect(
      messages(
        'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n' +
          `    tags:\n      port: 8080\n      on: true\n      none: null\n      list: [a]\n      deep: {a: b}\n      "": x\n      ${long}: x\n      big: ${'v'.repeat(257)}\n` +
          '  - name: db\n    type: K8S\n    description: d\n    tags: [team]\n' +
          '  - name: c\n    type: K8S\n    description: d\n    tags:\n',
      ),
    ).toEqual([
      'manifests/acme.yaml:7:13 environments[0].tags.port: expected a string, got number 8080 (quote it to make it a string)',
      'manifests/acme.yaml:8:11 environments[0].tags.on: expected a string, got boolean true (quote it to make it a string)',
      'manifests/acme.yaml:9:13 environments[0].tags.none: expected a string, got null',
      'manifests/acme.yaml:10:13 environments[0].tags.list: expected a string, got a list',
      'manifests/acme.yaml:11:13 environments[0].tags.deep: expected a string, got a mapping',
      'manifests/acme.yaml:12:7 environments[0].tags[""]: a tag key may not be empty',
      `manifests/acme.yaml:13:7 environments[0].tags.${long}: a tag key is at most 256 characters long (envsync's limit), this one 257`,
      "manifests/acme.yaml:14:12 environments[0].tags.big: a tag value is at most 256 characters long (envsync's limit), this one 257",
      'manifests/acme.yaml:18:11 environments[1].tags: expected a mapping of tag keys to strings, got a list',
      'manifests/acme.yaml:22:10 environments[2].tags: expected a mapping of tag keys to strings, got null',
    ]);
  });

  it('rejects unknown keys at any level with a suggestion', () => {
    expect(messages('org: acme\nenvironment: []\n')).toEqual([
      'manifests/acme.yaml:1:1 environments: is required but missing',
      'manifests/acme.yaml:2:1 environment: unknown key "environment" (did you mean "environments"?)',
    ]);
    expect(
      messages(
        'org: acme\nenvironments:\n  - name: a\n    type: S3\n    description: x\n    polices: []\n',
      ),
    ).toEqual([
      'manifests/acme.yaml:6:5 environments[0].polices: unknown key "polices" (did you mean "policies"?)',
    ]);
  });

  it('rejects duplicate policies, bad names and wrong types', () => {
    const found = messages(
      'org: "a b"\nenvironments:\n  - name: 123\n    type: S3\n    description: null\n    policies: [pci, pci]\n',
    );
    expect(found).toEqual([
      expect.stringContaining('1:6 org: "a b" is not a valid name'),
      expect.stringContaining('3:11 environments[0].name: expected a string, got number 123'),
      expect.stringContaining('5:18 environments[0].description: expected a string, got null'),
      expect.stringContaining('6:21 environments[0].policies[1]: policy "pci" is listed twice'),
    ]);
  });

  it('attributes problems to the org the document names, so only that org is held', () => {
    const result = parseManifest(
      'org: acme\nenvironments:\n  - name: a\n    type: bogus\n    description: x\n',
      'f.yaml',
    );
    expect(result.problems[0]?.org).toBe('acme');
    expect(parseManifest('- a\n- b\n', 'f.yaml').problems[0]?.org).toBeUndefined();
  });

  it('reads several documents, skipping empty and comment-only ones', () => {
    const result = parseManifest(
      '# comment only\n---\norg: a\nenvironments: []\n---\n---\norg: b\nenvironments: []\n',
      'f.yaml',
    );
    expect(result.problems).toEqual([]);
    expect(result.documents.map((d) => d.org)).toEqual(['a', 'b']);
    expect(parseManifest('', 'f.yaml')).toEqual({ documents: [], problems: [] });
    expect(parseManifest('# nothing here\n', 'f.yaml')).toEqual({
      documents: [],
      problems: [],
    });
  });

  it('a key indented wrongly gets a hint about indentation beside the parser words', () => {
    const hint =
      ' (check the indentation: each key lines up with the keys beside it, an environment\'s keys with the first one after its "- ")';
    const env = '  - name: prod\n    type: K8S\n';
    for (const [text, at, words] of [
      [
        `org: acme\nenvironments:\n${env}   description: x\n`,
        '5:1',
        'Sequence item without - indicator',
      ],
      [
        `org: acme\nenvironments:\n${env}      description: x\n`,
        '4:11',
        'Nested mappings are not allowed in compact mappings',
      ],
      [
        'org: acme\nenvironments:\n  - name: prod\n  type: K8S\n',
        '4:1',
        'All mapping items must start at the same column',
      ],
      [
        'org: acme\n  environments: []\n',
        '1:6',
        'Nested mappings are not allowed in compact mappings',
      ],
    ] as const) {
      expect(messages(text)[0], text).toBe(
        `manifests/acme.yaml:${at} YAML syntax: ${words}${hint}`,
      );
    }
    // Not where the cause is elsewhere: an unclosed bracket, a key given twice.
    for (const text of [
      'org: acme\nenvironments: [\n',
      'org: acme\norg: beta\nenvironments: []\n',
    ]) {
      const [first = ''] = messages(text);
      expect(first).toMatch(/ YAML syntax: /);
      expect(first).not.toContain('indentation');
    }
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = ['org: acme', 'a: &a [x,x,x,x,x,x,x,x,x,x]']
      .concat(
        Array.from(
          { length: 8 },
          (_, i) =>
            `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
              .fill(`*${String.fromCharCode(97 + i)}`)
              .join(',')}]`,
        ),
      )
      .join('\n');
    const result = parseManifest(bomb, 'bomb.yaml');
    expect(result.documents).toEqual([]);
    expect(result.problems[0]?.message).toMatch(/alias/i);
    // Without org or environments it is some other YAML: skipped, and never expanded to say so.
    const other = bomb.replace('org: acme\n', '');
    expect(parseManifest(other, 'bomb.yaml')).toEqual({
      documents: [],
      problems: [],
      notManifest: true,
    });
    const strict = parseManifest(other, 'bomb.yaml', { strict: true });
    expect(strict.problems[0]?.message).toMatch(/alias/i);
  });

  describe('line breaks, tags, booleans and what messages name', () => {
    const env = (extra: string) =>
      `org: acme\nenvironments:\n  - name: a\n    type: K8S\n    description: d\n${extra}`;

    it('reads a lone carriage return as a line break, positions included', () => {
      const plain = 'org: acme\renvironments:\r  - {name: a, type: K8S, description: d}\r';
      expect(parseManifest(plain, 'f.yaml').documents[0]?.environments.map((e) => e.name)).toEqual([
        'a',
      ]);
      expect(messages(plain.replace('K8S', 'k8s'))).toEqual([
        expect.stringMatching(/^manifests\/acme\.yaml:3:\d+ environments\[0\]\.type: "k8s"/),
      ]);
    });

    it.each([
      ['!custom', 'description: !custom x', '!custom'],
      ['!!js/function', 'description: !!js/function "function () {}"', '!!js/function'],
      ['!!binary', 'description: !!binary aGk=', '!!binary'],
      ['!!timestamp', 'description: !!timestamp 2020-01-01', '!!timestamp'],
      ['! (non-specific)', 'description: ! x', '!'],
    ])('refuses the unknown YAML tag %s where it stands', async (_name, line, shown) => {
      expect(
        messages(`org: acme\nenvironments:\n  - name: a\n    type: K8S\n    ${line}\n`),
      ).toEqual([
        `manifests/acme.yaml:5:18 unknown YAML tag "${shown}": a manifest holds plain values (strings, true or false, lists and mappings); remove the tag (quote the value to keep it as text)`,
      ]);
    });

    it('reads the core schema tags !!str, !!bool, !!seq and !!map as their plain forms', () => {
      const parsed = parseManifest(
        'org: !!str acme\nenvironments: !!seq\n  - !!map {name: !!str 2024, type: K8S, description: !!str true, include_scaling: !!bool true}\n',
        'f.yaml',
      );
      expect(parsed.problems).toEqual([]);
      expect(parsed.documents[0]?.environments[0]).toMatchObject({
        name: '2024',
        description: 'true',
        include_scaling: true,
      });
    });

    it.each(['True', 'TRUE', 'False', 'yes', 'on'])(
      'refuses the boolean %s with a located error: booleans are true or false only',
      async (word) => {
        expect(messages(env(`    include_scaling: ${word}\n`))).toEqual([
          `manifests/acme.yaml:6:22 environments[0].include_scaling: expected true or false, got the string "${word}" (booleans are lowercase true or false; True, yes, on are strings)`,
        ]);
      },
    );

    it('refuses !!bool with anything but true or false', () => {
      expect(messages(env('    require_provenance: !!bool True\n'))).toEqual([
        'manifests/acme.yaml:6:25 the value does not fit its tag !!bool: remove the tag or fix the value (!!bool takes true or false only)',
      ]);
    });

    it('reads True as a string where a string is expected', () => {
      const text = 'org: acme\nenvironments:\n  - {name: a, type: K8S, description: True}\n';
      expect(parseManifest(text, 'f.yaml').documents[0]?.environments[0]?.description).toBe('True');
    });

    it('names a merge key as such, not as a missing value', () => {
      const found = messages(
        'org: acme\nbase: &base {type: K8S, description: d}\nenvironments:\n  - <<: *base\n    name: a\n',
      );
      // The unknown key `base` is reported in the same run.
      expect(found).toEqual([
        'manifests/acme.yaml:2:1 base: unknown key "base" (allowed: org, prune, suspend, policies, environments)',
        expect.stringContaining(
          'acme.yaml:4:5 merge keys (<<) are not supported: write the fields out in each environment',
        ),
      ]);
      expect(found.join('\n')).not.toContain('undefined');
    });

    it('says "is required but missing" for a missing type, never "undefined undefined"', () => {
      expect(messages('org: acme\nenvironments:\n  - name: a\n    description: d\n')).toEqual([
        'manifests/acme.yaml:3:5 environments[0].type: is required but missing',
      ]);
    });

    it('names a byte order mark that starts a second document, not an unknown key', () => {
      const found = messages(
        'org: acme\nenvironments: []\n---\n\ufefforg: other\nenvironments: []\n',
      );
      expect(found).toEqual([
        'manifests/acme.yaml:4:1 a byte order mark (U+FEFF) inside the file: only the first character of a file may be one (it is usually left by joining files); remove it',
      ]);
      expect(found.join('\n')).not.toContain('unknown key');
      // One before a `---` line says the same.
      expect(
        messages('org: acme\nenvironments: []\n\ufeff---\norg: b\nenvironments: []\n'),
      ).toEqual([expect.stringContaining('3:1 a byte order mark (U+FEFF)')]);
      // At the very start of the file it is allowed.
      expect(messages('\ufefforg: acme\nenvironments: []\n')).toEqual([]);
    });

    it('names keys that are not strings', () => {
      expect(messages(env('    ? [x]\n    : 1\n'))).toEqual([
        'manifests/acme.yaml:6:7 a key must be a string, not a list',
      ]);
      expect(messages(env('    1: x\n'))).toEqual([
        'manifests/acme.yaml:6:5 a key must be a string, not number 1 (quote it)',
      ]);
    });

    it('reports every problem of a document in one run: a tag does not hide the schema problems', () => {
      const text =
        'org: acme\nenvironments:\n' +
        '  - name: a\n    type: k8s\n    description: !custom d\n' +
        '  - name: b\n    type: K8S\n    description: d\n    require_provenance: !!bool yes\n    colour: red\n';
      expect(messages(text)).toEqual([
        expect.stringMatching(
          /^manifests\/acme\.yaml:4:11 environments\[0\]\.type: "k8s" is not one of/,
        ),
        expect.stringMatching(/^manifests\/acme\.yaml:5:18 unknown YAML tag "!custom"/),
        expect.stringMatching(/^manifests\/acme\.yaml:9:25 the value does not fit its tag !!bool/),
        expect.stringMatching(
          /^manifests\/acme\.yaml:10:5 environments\[1\]\.colour: unknown key "colour"/,
        ),
      ]);
      // The names of a document that is not valid are kept for the check across files.
      expect(parseManifest(text, 'acme.yaml').declared?.map((d) => [d.name, d.line])).toEqual([
        ['a', 3],
        ['b', 6],
      ]);
    });
  });
});

const web = (extra: string) =>
  `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n${extra}`;

describe('renamed_from', () => {
  it('reads into renamedFrom, and leaves it out where not declared', () => {
    const text =
      'org: acme\nenvironments:\n' +
      '  - name: web\n    renamed_from: api.1\n    type: K8S\n    description: w\n' +
      '  - {name: db, type: S3, description: d}\n';
    const parsed = parseManifest(text, 'manifests/acme.yaml');
    expect(parsed.documents[0]?.environments[0]?.source).toMatchObject({ line: 3, column: 5 });
    expect(parsed.problems).toEqual([]);
    const [renamed, other] = parsed.documents[0]?.environments ?? [];
    expect(renamed).toMatchObject({ name: 'web', renamedFrom: 'api.1', type: 'K8S' });
    expect(other?.name).toBe('db');
    expect(other !== undefined && 'renamedFrom' in other).toBe(false);
    // Not a field: no field of the environment holds it.
    expect(Object.values({ ...renamed, renamedFrom: 0 })).not.toContain('api.1');
  });

  it("is refused as the environment's own name, at the value", () => {
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

  it('takes a valid name only, with the words of the name rule', () => {
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

  it('is suggested for a typo, and named where it belongs when written at the root', () => {
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
  it('is read with the value and where its key is', () => {
    const text = `prune: true\n${web('')}`;
    const parsed = parseManifest(text, 'manifests/acme.yaml');
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents[0]?.prune).toEqual({ value: true, line: 1, column: 1 });
    expect(parsed.documents[0]?.environments.map((env) => env.name)).toEqual(['web']);
    // In a flow mapping, in a later document of the file: the key's own place.
    const flow = parseManifest(
      'org: other\nenvironments: []\n---\n{org: acme,  prune: false, environments: []}\n',
      'manifests/acme.yaml',
    );
    expect(flow.documents.map((doc) => doc.prune)).toEqual([
      undefined,
      { value: false, line: 4, column: 14 },
    ]);
    // A document without it has none.
    expect(parseManifest(web(''), 'manifests/acme.yaml').documents[0]?.prune).toBeUndefined();
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
  ])('takes true or false only: prune: %s is an error at its value', (value, message) => {
    const parsed = parseManifest(
      `org: acme\nprune: ${value}\nenvironments: []\n`,
      'manifests/acme.yaml',
    );
    expect(parsed.documents).toEqual([]);
    expect(parsed.problems.map(formatProblem)).toEqual([
      `manifests/acme.yaml:2:8 prune: ${message}`,
    ]);
    expect(parsed.problems[0]?.org).toBe('acme');
  });

  it('is suggested for a typo at the root, and named where it belongs under an environment', () => {
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
