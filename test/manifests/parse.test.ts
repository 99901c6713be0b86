import { describe, expect, it } from 'vitest';
import { formatProblem, parseManifest } from '../../src/manifests/parse.ts';

const messages = (text: string) =>
  parseManifest(text, 'manifests/acme.yaml').problems.map(formatProblem);

describe('parseManifest', () => {
  it('records where each environment is, aliases and all', () => {
    const text = 'org: acme\nenvironments:\n  - {name: a, type: K8S, description: d}\n';
    const aliased = `${text}  - {name: b, type: K8S, description: d, policies: &p [x]}\n  - {name: c, type: K8S, description: d, policies: *p}\n`;
    for (const source of [text, aliased]) {
      expect(parseManifest(source, 'f.yaml').documents[0]?.environments[0]?.source).toEqual({
        file: 'f.yaml',
        document: 0,
        line: 3,
        column: 5,
        index: 0,
      });
    }
    expect(parseManifest(aliased, 'f.yaml').documents[0]?.environments[2]?.policies).toEqual(['x']);
  });

  it('reads a valid manifest with sorted policies, and no default for a field left out', async () => {
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

  it('gives each environment its own policies, even lists that join to the same text', async () => {
    const text =
      'org: acme\nenvironments:\n' +
      '  - {name: x, type: K8S, description: d, policies: ["a\\0b"]}\n' +
      '  - {name: y, type: K8S, description: d, policies: [a, b]}\n' +
      '  - {name: z, type: K8S, description: d, policies: ["a,b"]}\n' +
      '  - {name: w, type: K8S, description: d, policies: [b, a]}\n';
    const [doc] = parseManifest(text, 'acme.yaml').documents;
    expect(doc?.environments.map((e) => [e.name, e.policies])).toEqual([
      ['x', ['a\u0000b']],
      ['y', ['a', 'b']],
      ['z', ['a,b']],
      ['w', ['a', 'b']],
    ]);
  });

  it('names file, line, column and YAML path, with a did-you-mean for a wrong-case type', async () => {
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

  it('reads every production type and the fields managed only when declared', async () => {
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

  it('refuses members on another type, a member twice and a member that is not a name, with their places', async () => {
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

  it('reads tags as a mapping of strings with sorted keys, anchored or not', () => {
    const text =
      'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n' +
      '    tags:\n      team: platform\n      "1": one\n      env: ""\n      __proto__: odd\n';
    const plain = parseManifest(text, 'acme.yaml');
    const anchored = parseManifest(text.replace('    tags:', '    tags: &t'), 'acme.yaml');
    for (const result of [plain, anchored]) {
      expect(result.problems).toEqual([]);
      const tags = result.documents[0]?.environments[0]?.tags ?? {};
      expect(Object.entries(tags)).toEqual([
        ['1', 'one'],
        ['__proto__', 'odd'],
        ['env', ''],
        ['team', 'platform'],
      ]);
    }
    const empty = parseManifest(
      'org: acme\nenvironments:\n  - {name: a, type: S3, description: x, tags: {}}\n',
      'acme.yaml',
    );
    expect(empty.documents[0]?.environments[0]?.tags).toEqual({});
  });

  it('refuses tags that are not strings, or break the limits, each at its place', async () => {
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

  it('rejects unknown keys at any level with a suggestion', async () => {
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

  it('accepts only true/false for booleans (yes/on are strings in YAML 1.2)', async () => {
    const [message] = messages(
      'org: acme\nenvironments:\n  - name: a\n    type: S3\n    description: x\n    include_scaling: yes\n',
    );
    expect(message).toContain(
      'environments[0].include_scaling: expected true or false, got the string "yes"',
    );
  });

  it('rejects duplicate policies, bad names and wrong types', async () => {
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

  it('attributes problems to the org the document names, so only that org is held', async () => {
    const result = parseManifest(
      'org: acme\nenvironments:\n  - name: a\n    type: bogus\n    description: x\n',
      'f.yaml',
    );
    expect(result.problems[0]?.org).toBe('acme');
    expect(parseManifest('- a\n- b\n', 'f.yaml').problems[0]?.org).toBeUndefined();
  });

  it('reads several documents, skipping empty and comment-only ones', async () => {
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

  it('reports YAML syntax errors and duplicate keys with their position', async () => {
    expect(messages('org: acme\nenvironments: [\n')[0]).toMatch(
      /^manifests\/acme\.yaml:\d+:\d+ YAML syntax: /,
    );
    expect(messages('org: acme\norg: beta\nenvironments: []\n')[0]).toContain(
      '2:1 YAML syntax: Map keys must be unique',
    );
  });

  it('a key indented wrongly gets a hint about indentation beside the parser words', async () => {
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

  it('refuses alias bombs instead of expanding them', async () => {
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

  it('rejects __proto__, constructor and prototype keys as unknown keys', async () => {
    const found = messages(
      'org: acme\n__proto__: {x: 1}\nenvironments:\n  - name: a\n    type: S3\n    description: x\n    constructor: 1\n    prototype: 2\n',
    );
    expect(found).toEqual([
      expect.stringContaining('__proto__: unknown key "__proto__"'),
      expect.stringContaining('environments[0].constructor: unknown key'),
      expect.stringContaining('environments[0].prototype: unknown key'),
    ]);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  describe('line breaks, tags, booleans and what messages name', () => {
    const env = (extra: string) =>
      `org: acme\nenvironments:\n  - name: a\n    type: K8S\n    description: d\n${extra}`;

    it('reads a lone carriage return as a line break, with or without an alias in the file', async () => {
      const plain = 'org: acme\renvironments:\r  - {name: a, type: K8S, description: d}\r';
      const withAlias = `${plain}  - {name: b, type: K8S, description: &d x}\r  - {name: c, type: K8S, description: *d}\r`;
      expect(parseManifest(plain, 'f.yaml').documents[0]?.environments.map((e) => e.name)).toEqual([
        'a',
      ]);
      const located = parseManifest(withAlias, 'f.yaml');
      expect(located.problems).toEqual([]);
      expect(located.documents[0]?.environments.map((e) => [e.name, e.description])).toEqual([
        ['a', 'd'],
        ['b', 'x'],
        ['c', 'x'],
      ]);
      // Positions count a lone CR as a line break too.
      expect(
        messages('org: acme\renvironments:\r  - {name: a, type: k8s, description: d}\r'),
      ).toEqual([
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

    it('reads the core schema tags !!str, !!bool, !!seq and !!map as their plain forms', async () => {
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

    it('refuses !!bool with anything but true or false', async () => {
      expect(messages(env('    require_provenance: !!bool True\n'))).toEqual([
        'manifests/acme.yaml:6:25 the value does not fit its tag !!bool: remove the tag or fix the value (!!bool takes true or false only)',
      ]);
    });

    it('reads True as a string where a string is expected, the same on both paths', async () => {
      const text = 'org: acme\nenvironments:\n  - {name: a, type: K8S, description: True}\n';
      expect(parseManifest(text, 'f.yaml').documents[0]?.environments[0]?.description).toBe('True');
      expect(
        parseManifest(`${text}  - {name: b, type: K8S, description: &x y}\n`, 'f.yaml').documents[0]
          ?.environments[0]?.description,
      ).toBe('True');
    });

    it('names a merge key as such, not as a missing value', async () => {
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

    it('says "is required but missing" for a missing type, never "undefined undefined"', async () => {
      expect(messages('org: acme\nenvironments:\n  - name: a\n    description: d\n')).toEqual([
        'manifests/acme.yaml:3:5 environments[0].type: is required but missing',
      ]);
    });

    it('names a byte order mark that starts a second document, not an unknown key', async () => {
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

    it('names keys that are not strings', async () => {
      expect(messages(env('    ? [x]\n    : 1\n'))).toEqual([
        'manifests/acme.yaml:6:7 a key must be a string, not a list',
      ]);
      expect(messages(env('    1: x\n'))).toEqual([
        'manifests/acme.yaml:6:5 a key must be a string, not number 1 (quote it)',
      ]);
    });

    it('reports every problem of a document in one run: a tag does not hide the schema problems', async () => {
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

    it('reports a duplicate key as such', async () => {
      expect(messages(env('    description: e\n'))).toEqual([
        expect.stringMatching(/acme\.yaml:6:5 .*[Mm]ap keys must be unique/),
      ]);
    });
  });
});
