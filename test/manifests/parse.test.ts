import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/core/validation.ts';
import { parseManifest } from '../../src/manifests/parse.ts';

const messages = (text: string) =>
  parseManifest(text, 'manifests/acme.yaml').problems.map(formatProblem);
const env = (extra: string) =>
  `org: acme\nenvironments:\n  - name: a\n    type: K8S\n    description: d\n${extra}`;
const web = (extra: string) =>
  `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n${extra}`;
const NAME_RULE =
  'is not a valid name: it must start with a letter or number, and only contain letters, numbers, ".", "-" and "_"';
const ROOT_KEYS = '(allowed: org, prune, suspend, policies, environments)';
const BOOLEANS = '(booleans are lowercase true or false; True, yes, on are strings)';
const AT = 'manifests/acme.yaml';
const OWN_NAME =
  "is the environment's own name: remove renamed_from, or set it to the name the environment had before the rename";

describe('parseManifest', () => {
  it('reads a valid manifest with sorted policies, which entry each environment is, and no default for a field left out', () => {
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
            // Line and column are found when a message needs them (the fast reader's file).
            source: { file: 'acme.yaml', document: 0, index: 0 },
          },
        ],
      },
    ]);
    expect(result.documents[0]?.environments[0]?.include_scaling).toBeUndefined();
  });

  it('reads every production type and the fields managed only when declared', () => {
    const parsed = parseManifest(
      'org: acme.1\nenvironments:\n' +
        '  - {name: a_1, type: azure-apps, description: x, require_provenance: false}\n' +
        '  - {name: b, type: logical, description: y, included_environments: [a_1]}\n' +
        '  - {name: c, type: logical, description: z}\n',
      AT,
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

  it('reads tags as a mapping of strings with sorted keys', () => {
    const result = parseManifest(
      web(
        '    tags:\n      team: platform\n      "1": one\n      env: ""\n      __proto__: odd\n',
      ) + '  - {name: a, type: S3, description: x, tags: {}}\n',
      'acme.yaml',
    );
    expect(result.problems).toEqual([]);
    const [tags, empty] = result.documents[0]?.environments.map((e) => e.tags) ?? [];
    expect(Object.entries(tags ?? {}).join(' ')).toBe('1,one __proto__,odd env, team,platform');
    expect(empty).toEqual({});
  });

  it('attributes problems to the org the document names, so only that org is held', () => {
    expect(parseManifest(env('').replace('K8S', 'bogus'), 'f.yaml').problems[0]?.org).toBe('acme');
    expect(parseManifest('- a\n- b\n', 'f.yaml').problems[0]?.org).toBeUndefined();
  });

  it('reads several documents, skipping empty and comment-only ones', () => {
    const result = parseManifest(
      '# comment only\n---\norg: a\nenvironments: []\n---\n---\norg: b\nenvironments: []\n',
      'f.yaml',
    );
    expect(result.problems).toEqual([]);
    expect(result.documents.map((d) => d.org)).toEqual(['a', 'b']);
    for (const text of ['', '# nothing here\n'])
      expect(parseManifest(text, 'f.yaml')).toEqual({ documents: [], problems: [] });
  });

  it('reads a lone carriage return as a line break, positions included', () => {
    const plain = 'org: acme\renvironments:\r  - {name: a, type: K8S, description: d}\r';
    const names = parseManifest(plain, 'f.yaml').documents[0]?.environments.map((e) => e.name);
    expect(names).toEqual(['a']);
    expect(messages(plain.replace('K8S', 'k8s'))).toEqual([
      expect.stringMatching(/^manifests\/acme\.yaml:3:\d+ environments\[0\]\.type: "k8s"/),
    ]);
  });

  it('reads the core schema tags as their plain forms, and True as a string where one is expected', () => {
    const parsed = parseManifest(
      'org: !!str acme\nenvironments: !!seq\n  - !!map {name: !!str 2024, type: K8S, description: !!str true, include_scaling: !!bool true}\n' +
        '  - {name: b, type: K8S, description: True}\n',
      'f.yaml',
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents[0]?.environments).toMatchObject([
      { name: '2024', description: 'true', include_scaling: true },
      { name: 'b', description: 'True' },
    ]);
  });

  it('refuses alias bombs instead of expanding them', () => {
    const letter = (i: number) => String.fromCharCode(97 + i);
    const lines = Array.from(
      { length: 8 },
      (_, i) =>
        `${letter(i + 1)}: &${letter(i + 1)} [${Array(10)
          .fill(`*${letter(i)}`)
          .join(',')}]`,
    );
    const bomb = ['org: acme', 'a: &a [x,x,x,x,x,x,x,x,x,x]', ...lines].join('\n');
    const result = parseManifest(bomb, 'bomb.yaml');
    expect(result.documents).toEqual([]);
    expect(result.problems[0]?.message).toMatch(/alias/i);
    // Without org or environments it is some other YAML: skipped, and never expanded to say so.
    const other = bomb.replace('org: acme\n', '');
    const skipped = { documents: [], problems: [], notManifest: true };
    expect(parseManifest(other, 'bomb.yaml')).toEqual(skipped);
    const strict = parseManifest(other, 'bomb.yaml', { strict: true });
    expect(strict.problems[0]?.message).toMatch(/alias/i);
  });

  it('reports every problem of a document in one run, and keeps its names for the check across files', () => {
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
    const declared = parseManifest(text, 'acme.yaml').declared;
    expect(declared?.map((d) => [d.name, d.line])).toEqual([
      ['a', 3],
      ['b', 6],
    ]);
  });

  it.each([
    [
      'a wrong-case type, with a did-you-mean',
      'org: acme\nenvironments:\n  - name: production\n    type: k8s\n    description: x\n',
      [
        `${AT}:4:11 environments[0].type: "k8s" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "K8S"?)`,
      ],
    ],
    [
      'members on another type, a member twice and a member that is not a name',
      'org: acme\nenvironments:\n' +
        '  - name: web\n    type: K8S\n    description: w\n    included_environments: [db]\n' +
        '  - name: all\n    type: logical\n    description: a\n    included_environments: [web, "a b", web]\n',
      [
        `${AT}:6:28 environments[0].included_environments: is allowed only on type logical (this environment's type is "K8S")`,
        `${AT}:10:34 environments[1].included_environments[1]: "a b" ${NAME_RULE}`,
        `${AT}:10:41 environments[1].included_environments[2]: environment "web" is listed twice`,
      ],
    ],
    [
      'tags that are not strings, or break the limits',
      web(
        `    tags:\n      port: 8080\n      on: true\n      none: null\n      list: [a]\n      deep: {a: b}\n      "": x\n      ${'k'.repeat(257)}: x\n      big: ${'v'.repeat(257)}\n`,
      ) +
        '  - name: db\n    type: K8S\n    description: d\n    tags: [team]\n' +
        '  - name: c\n    type: K8S\n    description: d\n    tags:\n',
      [
        `${AT}:7:13 environments[0].tags.port: expected a string, got number 8080 (quote it to make it a string)`,
        `${AT}:8:11 environments[0].tags.on: expected a string, got boolean true (quote it to make it a string)`,
        `${AT}:9:13 environments[0].tags.none: expected a string, got null`,
        `${AT}:10:13 environments[0].tags.list: expected a string, got a list`,
        `${AT}:11:13 environments[0].tags.deep: expected a string, got a mapping`,
        `${AT}:12:7 environments[0].tags[""]: a tag key may not be empty`,
        `${AT}:13:7 environments[0].tags.${'k'.repeat(257)}: a tag key is at most 256 characters long (envsync's limit), this one 257`,
        `${AT}:14:12 environments[0].tags.big: a tag value is at most 256 characters long (envsync's limit), this one 257`,
        `${AT}:18:11 environments[1].tags: expected a mapping of tag keys to strings, got a list`,
        `${AT}:22:10 environments[2].tags: expected a mapping of tag keys to strings, got null`,
      ],
    ],
    [
      'an unknown key at the root, with a suggestion',
      'org: acme\nenvironment: []\n',
      [
        `${AT}:1:1 environments: is required but missing`,
        `${AT}:2:1 environment: unknown key "environment" (did you mean "environments"?)`,
      ],
    ],
    [
      'an unknown key in an environment, with a suggestion',
      env('    polices: []\n'),
      [`${AT}:6:5 environments[0].polices: unknown key "polices" (did you mean "policies"?)`],
    ],
    [
      'duplicate policies, bad names and wrong types',
      'org: "a b"\nenvironments:\n  - name: 123\n    type: S3\n    description: null\n    policies: [pci, pci]\n',
      [
        `${AT}:1:6 org: "a b" ${NAME_RULE}`,
        `${AT}:3:11 environments[0].name: expected a string, got number 123`,
        `${AT}:5:18 environments[0].description: expected a string, got null`,
        `${AT}:6:21 environments[0].policies[1]: policy "pci" is listed twice`,
      ],
    ],
    [
      '!!bool with anything but true or false',
      env('    require_provenance: !!bool True\n'),
      [
        `${AT}:6:25 the value does not fit its tag !!bool: remove the tag or fix the value (!!bool takes true or false only)`,
      ],
    ],
    [
      'a merge key, as such, beside an unknown key',
      'org: acme\nbase: &base {type: K8S, description: d}\nenvironments:\n  - <<: *base\n    name: a\n',
      [
        `${AT}:2:1 base: unknown key "base" ${ROOT_KEYS}`,
        `${AT}:4:5 merge keys (<<) are not supported: write the fields out in each environment (an anchor and alias can share a whole value, such as a list of policies)`,
      ],
    ],
    [
      'a missing type, as "is required but missing"',
      'org: acme\nenvironments:\n  - name: a\n    description: d\n',
      [`${AT}:3:5 environments[0].type: is required but missing`],
    ],
    [
      'a byte order mark that starts a second document, not as an unknown key',
      'org: acme\nenvironments: []\n---\n\ufefforg: other\nenvironments: []\n',
      [
        `${AT}:4:1 a byte order mark (U+FEFF) inside the file: only the first character of a file may be one (it is usually left by joining files); remove it`,
      ],
    ],
    [
      'a byte order mark before a `---` line',
      'org: acme\nenvironments: []\n\ufeff---\norg: b\nenvironments: []\n',
      [
        `${AT}:3:1 a byte order mark (U+FEFF) inside the file: only the first character of a file may be one (it is usually left by joining files); remove it`,
      ],
    ],
    ['no byte order mark at the very start of the file', '\ufefforg: acme\nenvironments: []\n', []],
    [
      'renamed_from that is not a valid name',
      'org: acme\nenvironments:\n' +
        '  - {name: a, type: S3, description: d, renamed_from: "x y"}\n' +
        '  - {name: b, type: S3, description: d, renamed_from: 12}\n' +
        '  - {name: c, type: S3, description: d, renamed_from: null}\n' +
        '  - {name: e, type: S3, description: d, renamed_from: [x]}\n',
      [
        `${AT}:3:55 environments[0].renamed_from: "x y" ${NAME_RULE}`,
        `${AT}:4:55 environments[1].renamed_from: expected a string, got number 12`,
        `${AT}:5:55 environments[2].renamed_from: expected a string, got null`,
        `${AT}:6:55 environments[3].renamed_from: expected a string, got a list`,
      ],
    ],
    [
      'keys that are not strings',
      env('    ? [x]\n    : 1\n    1: x\n'),
      [
        `${AT}:6:7 a key must be a string, not a list`,
        `${AT}:8:5 a key must be a string, not number 1 (quote it)`,
      ],
    ],
    [
      "renamed_from as the environment's own name, at the value, in a block or a flow mapping",
      web('    renamed_from: web\n  - {name: a, renamed_from: a, type: S3, description: d}\n'),
      [
        `${AT}:6:19 environments[0].renamed_from: ${OWN_NAME}`,
        `${AT}:7:29 environments[1].renamed_from: ${OWN_NAME}`,
      ],
    ],
    [
      'unknown keys in an environment: a typo of renamed_from, a key of the root, a key not close to any',
      web(
        '    rename_from: api\n  - {name: b, type: S3, description: d, prune: true, colour: red}\n',
      ),
      [
        `${AT}:6:5 environments[0].rename_from: unknown key "rename_from" (did you mean "renamed_from"?)`,
        `${AT}:7:41 environments[1].prune: unknown key "prune" here: it is a key of the document itself, next to org`,
        `${AT}:7:54 environments[1].colour: unknown key "colour" (allowed: name, renamed_from, type, description, include_scaling, policies, require_provenance, included_environments, tags)`,
      ],
    ],
    [
      "unknown keys at the root: a typo of prune, an environment's key, a key not close to any",
      'org: acme\nprnue: true\nrenamed_from: api\nbase: 1\nenvironments: []\n',
      [
        `${AT}:2:1 prnue: unknown key "prnue" (did you mean "prune"?)`,
        `${AT}:3:1 renamed_from: unknown key "renamed_from" here: it is a key of an environment, under environments`,
        `${AT}:4:1 base: unknown key "base" ${ROOT_KEYS}`,
      ],
    ],
  ])('names %s at its file, line, column and path', (_what, text, expected) => {
    expect(messages(text)).toEqual(expected);
  });

  it.each([
    ['Docker', 'docker'],
    ['ecs', 'ECS'],
    ['LAMBDA', 'lambda'],
    ['Cloud-Run', 'cloud-run'],
  ])('suggests the right case of a production type: %s -> %s', (given, meant) => {
    expect(messages(env('').replace('K8S', given))).toEqual([
      expect.stringContaining(`(did you mean "${meant}"?)`),
    ]);
  });

  it.each([
    ['!custom', 'description: !custom x'],
    ['!!js/function', 'description: !!js/function "function () {}"'],
    ['!!binary', 'description: !!binary aGk='],
    ['!!timestamp', 'description: !!timestamp 2020-01-01'],
    ['!', 'description: ! x'],
  ])('refuses the unknown YAML tag %s where it stands', (shown, line) => {
    expect(messages(`org: acme\nenvironments:\n  - name: a\n    type: K8S\n    ${line}\n`)).toEqual(
      [
        `${AT}:5:18 unknown YAML tag "${shown}": a manifest holds plain values (strings, true or false, lists and mappings); remove the tag (quote the value to keep it as text)`,
      ],
    );
  });

  it.each(['True', 'TRUE', 'False', 'yes', 'on'])(
    'refuses the boolean %s with a located error: booleans are true or false only',
    (word) => {
      expect(messages(env(`    include_scaling: ${word}\n`))).toEqual([
        `${AT}:6:22 environments[0].include_scaling: expected true or false, got the string "${word}" ${BOOLEANS}`,
      ]);
    },
  );

  it('a key indented wrongly gets a hint about indentation beside the parser words', () => {
    const hint =
      ' (check the indentation: each key lines up with the keys beside it, an environment\'s keys with the first one after its "- ")';
    const start = 'org: acme\nenvironments:\n  - name: prod\n';
    for (const [text, at, words] of [
      [`${start}    type: K8S\n   description: x\n`, '5:1', 'Sequence item without - indicator'],
      [
        `${start}    type: K8S\n      description: x\n`,
        '4:11',
        'Nested mappings are not allowed in compact mappings',
      ],
      [`${start}  type: K8S\n`, '4:1', 'All mapping items must start at the same column'],
      [
        'org: acme\n  environments: []\n',
        '1:6',
        'Nested mappings are not allowed in compact mappings',
      ],
    ] as const) {
      expect(messages(text)[0], text).toBe(`${AT}:${at} YAML syntax: ${words}${hint}`);
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
});

describe('renamed_from', () => {
  it('reads into renamedFrom, and leaves it out where not declared', () => {
    const text =
      'org: acme\nenvironments:\n' +
      '  - name: web\n    renamed_from: api.1\n    type: K8S\n    description: w\n' +
      '  - {name: db, type: S3, description: d}\n';
    const parsed = parseManifest(text, AT);
    expect(parsed.problems).toEqual([]);
    const [renamed, other] = parsed.documents[0]?.environments ?? [];
    expect(renamed).toMatchObject({ name: 'web', renamedFrom: 'api.1', type: 'K8S' });
    expect(renamed?.source).toMatchObject({ document: 0, index: 0 });
    expect(other?.name).toBe('db');
    expect(other !== undefined && 'renamedFrom' in other).toBe(false);
    // Not a field: no field of the environment holds it.
    expect(Object.values({ ...renamed, renamedFrom: 0 })).not.toContain('api.1');
  });
});

describe('prune', () => {
  it('is read with the value and where its key is', () => {
    const parsed = parseManifest(`prune: true\n${web('')}`, AT);
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents[0]?.prune).toEqual({ value: true, line: 1, column: 1 });
    expect(parsed.documents[0]?.environments.map((e) => e.name)).toEqual(['web']);
    // In a flow mapping, in a later document of the file: the key's own place; none without it.
    const flow = parseManifest(
      'org: other\nenvironments: []\n---\n{org: acme,  prune: false, environments: []}\n',
      AT,
    );
    expect(flow.documents.map((doc) => doc.prune)).toEqual([
      undefined,
      { value: false, line: 4, column: 14 },
    ]);
  });

  it.each([
    ['"true"', `expected true or false, got the string "true" ${BOOLEANS}`],
    ['1', 'expected true or false, got number 1'],
    ['null', 'expected true or false, got null'],
    ['', 'expected true or false, got null'],
    ['[true]', 'expected true or false, got a list'],
  ])('takes true or false only: prune: %s is an error at its value', (value, message) => {
    const parsed = parseManifest(`org: acme\nprune: ${value}\nenvironments: []\n`, AT);
    expect(parsed.documents).toEqual([]);
    expect(parsed.problems.map(formatProblem)).toEqual([`${AT}:2:8 prune: ${message}`]);
    expect(parsed.problems[0]?.org).toBe('acme');
  });
});
