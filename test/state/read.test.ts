import { describe, expect, it } from 'vitest';
import { STATE_FORMAT, STATE_VERSION, recordsOf } from '../../src/state/codec.ts';
import { judgeStateText, unreadableState } from '../../src/state/read.ts';

const API = 'http://127.0.0.1:8080/';
const rewritten = 'starting empty (it will be rewritten)';
const judge = (text: string, api: string | undefined) => judgeStateText(text, api, STATE_FORMAT);

const v1 = JSON.stringify({
  version: 1,
  api: API,
  orgs: { acme: { prod: { include_scaling: true, policies: ['pci'] } } },
});
const v2 = JSON.stringify({
  version: 2,
  api: API,
  orgs: { acme: [{ include_scaling: true, policies: ['pci'], environments: ['prod'] }] },
});

const v3 = JSON.stringify({
  version: 3,
  api: API,
  orgs: {
    acme: [
      {
        include_scaling: true,
        policies: ['pci'],
        environments: ['prod'],
        fingerprints: [null],
      },
    ],
  },
});

describe('judgeStateText: which state files are trusted, and why the others are not', () => {
  it.each<[string, string, string, string, Record<string, unknown>]>([
    ['garbage', 'this is not json {{{', 'state file is not valid JSON', rewritten, {}],
    ['truncated', v2.slice(0, -10), 'state file is not valid JSON', rewritten, {}],
    [
      'of a future version',
      '{"version": 99, "orgs": {}}',
      'state file has version 99, newer than this envsync understands (3)',
      'starting empty',
      { version: 99 },
    ],
    ['null', 'null', 'state file has an unexpected shape', rewritten, {}],
    ['a list', '[]', 'state file has an unexpected shape', rewritten, {}],
    ['without a version', '{"orgs": {}}', 'state file has an unexpected shape', rewritten, {}],
    [
      'a version as text',
      '{"version": "2", "orgs": {}}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'version 0',
      '{"version": 0, "orgs": {}}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'version 1.5',
      '{"version": 1.5, "orgs": {}}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'orgs as a list',
      '{"version": 1, "orgs": []}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'an address that is not text',
      '{"version": 2, "api": 5, "orgs": {}}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'a version 2 org that is not a list',
      '{"version": 2, "orgs": {"acme": {}}}',
      'state file has an unexpected shape',
      rewritten,
      {},
    ],
    [
      'written for another API address',
      '{"version": 2, "api": "https://other.example/", "orgs": {}}',
      'state file was written for another API address',
      'starting empty',
      { recordedFor: 'https://other.example/', api: API },
    ],
    [
      'a version 1 file with a malformed record',
      '{"version": 1, "orgs": {"alpha": {"env-1": {"include_scaling": "yes", "policies": []}}}}',
      'state file has a malformed record',
      rewritten,
      { org: 'alpha', env: 'env-1' },
    ],
    [
      'a version 2 group without its environments',
      '{"version": 2, "orgs": {"alpha": [{"include_scaling": true, "policies": []}]}}',
      'state file has a malformed record',
      rewritten,
      { org: 'alpha', env: '(group)' },
    ],
  ])('refused: %s', (_title, text, what, atLoad, fields) => {
    expect(judge(text, API)).toEqual({ kind: 'bad', what, atLoad, fields });
  });

  it.each([
    ['version 1, this address', v1, API],
    ['version 2, this address', v2, API],
    ['version 3, this address', v3, API],
    ['written for no address in particular', v2.replace(`"api":"${API}",`, ''), API],
    ['read without an address to check', v2.replace(API, 'https://other.example/'), undefined],
  ])('trusted: %s', (_title, text, api) => {
    const verdict = judge(text, api);
    expect(verdict.kind).toBe('ok');
    const orgs = verdict.kind === 'ok' ? verdict.orgs : new Map();
    expect([...orgs.keys()]).toEqual(['acme']);
    expect(recordsOf(orgs.get('acme') ?? [])).toEqual({
      prod: { include_scaling: true, policies: ['pci'] },
    });
  });

  it('reads every version up to the one it writes, and names that one as the newest', () => {
    expect(STATE_FORMAT.versions).toEqual(Array.from({ length: STATE_VERSION }, (_, i) => i + 1));
    expect(STATE_FORMAT.versions.at(-1)).toBe(STATE_VERSION);
    expect(judge(`{"version": ${STATE_VERSION + 1}, "orgs": {}}`, API)).toMatchObject({
      what: `state file has version ${STATE_VERSION + 1}, newer than this envsync understands (${STATE_VERSION})`,
    });
  });

  it('a file that cannot be read at all costs one PUT per hidden field, and says its code', () => {
    expect(unreadableState('EACCES')).toEqual({
      kind: 'bad',
      what: 'state file cannot be read',
      atLoad:
        'starting empty (one extra PUT per environment whose listing hides include_scaling/policies)',
      fields: { code: 'EACCES' },
    });
  });
});
