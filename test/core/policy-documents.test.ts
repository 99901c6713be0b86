import { describe, expect, it } from 'vitest';
import {
  needsPolicyDocuments,
  planPolicyDocuments,
  samePolicyText,
  unknownPolicies,
  uploadComment,
  type DeclaredPolicyDocument,
  type ObservedPolicyDocument,
} from '../../src/core/policy-documents.ts';
import { desired } from '../helpers/builders.ts';

/** A digest that shows the text it names, so the tables read plainly. */
const digest = (text: string) => `#${JSON.stringify(text)}`;

const declared = (name: string, content: string, description?: string): DeclaredPolicyDocument => ({
  name,
  content,
  ...(description === undefined ? {} : { description }),
  file: `policies/${name}.yaml`,
  source: { file: 'acme.yaml', line: 3, column: 5, path: 'policies[0]' },
});

const held = (name: string, content?: string, description = '', version = 2) =>
  ({
    name,
    description,
    ...(content === undefined ? {} : { latest: { version, content } }),
  }) satisfies ObservedPolicyDocument;

it.each([
  ['a: 1\n', 'a: 1\n', true],
  ['a: 1\n', 'a: 1', true],
  ['a: 1\n\n\n', 'a: 1', true],
  ['a: 1\r\n', 'a: 1', true],
  ['a: 1\r\n', 'a: 1\n', true],
  ['x\n\r\n\n', 'x', true],
  ['x\ny\n', 'x\ny', true],
  ['', '\n', true],
  ['a: 1', 'a: 2', false],
  ['a: 1 ', 'a: 1', false],
  ['a: 1\n ', 'a: 1', false],
  ['\na: 1', 'a: 1', false],
  ['a: 1\r', 'a: 1', false],
  ['a:\n  - x\n', 'a:\n - x\n', false],
])('samePolicyText(%j, %j) is %s: only trailing line breaks are ignored', (a, b, same) => {
  expect(samePolicyText(a, b)).toBe(same);
  expect(samePolicyText(b, a)).toBe(same);
});

describe('planPolicyDocuments', () => {
  /** The change expected for `prod`. */
  const planned = (
    action: 'create' | 'update',
    version: number | null,
    fields: object,
    content: string,
    description?: string,
  ) => ({
    action,
    name: 'prod',
    version,
    fields,
    content,
    ...(description === undefined ? {} : { description }),
  });
  const change = (from: string | null, to: string) => ({ from, to });
  it.each([
    [
      'a document the service lacks, with the description only when declared',
      declared('prod', 'a: 1\n', 'Production'),
      undefined,
      planned(
        'create',
        null,
        { content: change(null, digest('a: 1\n')), description: change(null, 'Production') },
        'a: 1\n',
        'Production',
      ),
    ],
    [
      'a document the service lacks, without a description',
      declared('prod', 'b\n'),
      undefined,
      planned('create', null, { content: change(null, digest('b\n')) }, 'b\n'),
    ],
    [
      'the same text but a trailing newline',
      declared('prod', 'a: 1\n', 'P'),
      held('prod', 'a: 1', 'P'),
      undefined,
    ],
    [
      'a description left out of the manifest',
      declared('prod', 'a: 1\n'),
      held('prod', 'a: 1\n', 'x'),
      undefined,
    ],
    [
      'changed content: the file is sent',
      declared('prod', 'a: 2\n', 'P'),
      held('prod', 'a: 1\n', 'P', 3),
      planned('update', 3, { content: change(digest('a: 1\n'), digest('a: 2\n')) }, 'a: 2\n', 'P'),
    ],
    [
      "a changed description alone: the service's own text is sent, so no version is made",
      declared('prod', 'a: 1\n', 'New'),
      held('prod', 'a: 1', 'Old', 4),
      planned('update', 4, { description: change('Old', 'New') }, 'a: 1', 'New'),
    ],
    [
      'both differ',
      declared('prod', 'b\n', 'New'),
      held('prod', 'a\n', 'Old', 1),
      planned(
        'update',
        1,
        { content: change(digest('a\n'), digest('b\n')), description: change('Old', 'New') },
        'b\n',
        'New',
      ),
    ],
    [
      'a document without any version is given one',
      declared('prod', 'a\n'),
      held('prod'),
      planned('update', null, { content: change(null, digest('a\n')) }, 'a\n'),
    ],
  ])('%s', (_title, doc, remote, expected) => {
    const plan = planPolicyDocuments([doc], remote === undefined ? [] : [remote], digest);
    expect(plan.changes).toEqual(expected === undefined ? [] : [expected]);
    expect(plan.unchanged).toEqual(expected === undefined ? ['prod'] : []);
  });

  it('lists the documents only the service has as not managed, sorted, and plans in name order', () => {
    const plan = planPolicyDocuments(
      [declared('b', 'x'), declared('a', 'x')],
      [held('zeta', 'y'), held('b', 'x'), held('alpha', 'y')],
      digest,
    );
    expect(plan.changes.map((c) => c.name)).toEqual(['a']);
    expect(plan.unchanged).toEqual(['b']);
    expect(plan.notManaged).toEqual(['alpha', 'zeta']);
  });
});

describe('policies environments attach', () => {
  const envs = [
    desired('web', { policies: ['pci', 'baseline'] }),
    desired('db', { policies: [] }),
    desired('cache'),
    desired('api', { policies: ['sox'] }),
  ];
  it.each([
    ['every policy declared or held', ['pci'], ['baseline', 'sox'], []],
    ['only the manifests declare them', ['pci', 'baseline', 'sox'], [], []],
    ['neither has them', [], ['baseline'], ['web:pci', 'api:sox']],
  ])('unknownPolicies: %s', (_what, mine, theirs, unknown) => {
    const named = (names: string[]) => names.map((name) => ({ name }));
    const found = unknownPolicies(envs, named(mine), named(theirs));
    expect(found.map((u) => `${u.env.name}:${u.policy}`)).toEqual(unknown);
  });

  it('needs the service documents only when the manifests declare or attach one', () => {
    expect(needsPolicyDocuments([desired('a'), desired('b', { policies: [] })], [])).toBe(false);
    expect(needsPolicyDocuments([desired('a', { policies: ['p'] })], [])).toBe(true);
    expect(needsPolicyDocuments([desired('a')], [{}])).toBe(true);
  });
});

it.each([
  [undefined, 'envsync'],
  ['', 'envsync'],
  ['3f2a9c1', 'envsync: git revision 3f2a9c1'],
])('uploadComment(%j) is %j', (revision, comment) => {
  expect(uploadComment(revision)).toBe(comment);
});
