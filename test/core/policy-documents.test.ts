import { describe, expect, it } from 'vitest';
import {
  needsPolicyDocuments,
  planPolicyDocuments,
  samePolicyText,
  unknownPolicies,
  uploadComment,
  withoutTrailingNewlines,
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

const held = (
  name: string,
  content: string | undefined,
  description = '',
  version = 2,
): ObservedPolicyDocument => ({
  name,
  description,
  ...(content === undefined ? {} : { latest: { version, content } }),
});

describe('samePolicyText: only trailing line breaks are ignored', () => {
  it.each([
    ['a: 1\n', 'a: 1\n', true],
    ['a: 1\n', 'a: 1', true],
    ['a: 1\n\n\n', 'a: 1', true],
    ['a: 1\r\n', 'a: 1', true],
    ['a: 1\r\n', 'a: 1\n', true],
    ['a: 1', 'a: 2', false],
    ['a: 1 ', 'a: 1', false],
    ['a: 1\n ', 'a: 1', false],
    ['\na: 1', 'a: 1', false],
    ['a: 1\r', 'a: 1', false],
    ['a:\n  - x\n', 'a:\n - x\n', false],
    ['', '\n', true],
  ])('%j and %j: %s', (a, b, same) => {
    expect(samePolicyText(a, b)).toBe(same);
    expect(samePolicyText(b, a)).toBe(same);
  });

  it('strips LF and CRLF runs from the end only', () => {
    expect(withoutTrailingNewlines('x\n\r\n\n')).toBe('x');
    expect(withoutTrailingNewlines('x\ny\n')).toBe('x\ny');
    expect(withoutTrailingNewlines('\n\n')).toBe('');
  });
});

describe('planPolicyDocuments', () => {
  it.each([
    {
      what: 'a document the service lacks is created, with the description when declared',
      want: [declared('prod', 'a: 1\n', 'Production')],
      have: [],
      changes: [
        {
          action: 'create',
          name: 'prod',
          version: null,
          fields: {
            content: { from: null, to: digest('a: 1\n') },
            description: { from: null, to: 'Production' },
          },
          content: 'a: 1\n',
          description: 'Production',
        },
      ],
      unchanged: [],
    },
    {
      what: 'a created document without a description sends none',
      want: [declared('prod', 'a: 1\n')],
      have: [],
      changes: [
        {
          action: 'create',
          name: 'prod',
          version: null,
          fields: { content: { from: null, to: digest('a: 1\n') } },
          content: 'a: 1\n',
        },
      ],
      unchanged: [],
    },
    {
      what: 'the same text but a trailing newline is unchanged',
      want: [declared('prod', 'a: 1\n', 'P')],
      have: [held('prod', 'a: 1', 'P')],
      changes: [],
      unchanged: ['prod'],
    },
    {
      what: 'a description left out of the manifest is not compared',
      want: [declared('prod', 'a: 1\n')],
      have: [held('prod', 'a: 1\n', 'whatever the service says')],
      changes: [],
      unchanged: ['prod'],
    },
    {
      what: 'changed content makes an update that sends the file',
      want: [declared('prod', 'a: 2\n', 'P')],
      have: [held('prod', 'a: 1\n', 'P', 3)],
      changes: [
        {
          action: 'update',
          name: 'prod',
          version: 3,
          fields: { content: { from: digest('a: 1\n'), to: digest('a: 2\n') } },
          content: 'a: 2\n',
          description: 'P',
        },
      ],
      unchanged: [],
    },
    {
      what: "a changed description alone sends the service's own text, so no version is made",
      want: [declared('prod', 'a: 1\n', 'New')],
      have: [held('prod', 'a: 1', 'Old', 4)],
      changes: [
        {
          action: 'update',
          name: 'prod',
          version: 4,
          fields: { description: { from: 'Old', to: 'New' } },
          content: 'a: 1',
          description: 'New',
        },
      ],
      unchanged: [],
    },
    {
      what: 'both differ',
      want: [declared('prod', 'b\n', 'New')],
      have: [held('prod', 'a\n', 'Old', 1)],
      changes: [
        {
          action: 'update',
          name: 'prod',
          version: 1,
          fields: {
            content: { from: digest('a\n'), to: digest('b\n') },
            description: { from: 'Old', to: 'New' },
          },
          content: 'b\n',
          description: 'New',
        },
      ],
      unchanged: [],
    },
    {
      what: 'a document the service holds without any version is given one',
      want: [declared('prod', 'a\n')],
      have: [held('prod', undefined)],
      changes: [
        {
          action: 'update',
          name: 'prod',
          version: null,
          fields: { content: { from: null, to: digest('a\n') } },
          content: 'a\n',
        },
      ],
      unchanged: [],
    },
  ])('$what', ({ want, have, changes, unchanged }) => {
    const plan = planPolicyDocuments(want, have, digest);
    expect(plan.changes).toEqual(changes);
    expect(plan.unchanged).toEqual(unchanged);
    expect(plan.notManaged).toEqual([]);
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

describe('unknownPolicies', () => {
  const envs = [
    desired('web', { policies: ['pci', 'baseline'] }),
    desired('db', { policies: [] }),
    desired('cache'),
    desired('api', { policies: ['sox'] }),
  ];
  it.each([
    ['every policy declared or held', ['pci'], ['baseline', 'sox'], []],
    ['one only the manifests declare is known', ['pci', 'baseline', 'sox'], [], []],
    [
      'neither has them',
      [],
      ['baseline'],
      [
        ['web', 'pci'],
        ['api', 'sox'],
      ],
    ],
  ])('%s', (_what, mine, theirs, unknown) => {
    const found = unknownPolicies(
      envs,
      mine.map((name) => ({ name })),
      theirs.map((name) => ({ name })),
    );
    expect(found.map((u) => [u.env.name, u.policy])).toEqual(unknown);
  });
});

describe('needsPolicyDocuments: a request only when the manifests declare or attach one', () => {
  it.each([
    ['nothing', [desired('a'), desired('b', { policies: [] })], [], false],
    ['an attached policy', [desired('a', { policies: ['p'] })], [], true],
    ['a declared document', [desired('a')], [{}], true],
  ])('%s', (_what, envs, docs, needed) => {
    expect(needsPolicyDocuments(envs, docs)).toBe(needed);
  });
});

describe('uploadComment', () => {
  it.each([
    [undefined, 'envsync'],
    ['', 'envsync'],
    ['3f2a9c1', 'envsync: git revision 3f2a9c1'],
  ])('revision %j: %j', (revision, comment) => {
    expect(uploadComment(revision)).toBe(comment);
  });
});
