import { describe, expect, it } from 'vitest';
import {
  commonFailure,
  failureCause,
  type FailureCause,
  failuresSaidOnce,
  type OrgOutcome,
  saidOnce,
  someNames,
} from '../../src/core/report.ts';

const REFUSED: FailureCause = { kind: 'refused', code: 'ECONNREFUSED', host: '127.0.0.1:9' };
const NOT_FOUND: FailureCause = { kind: 'dns', code: 'ENOTFOUND', host: 'api.x.invalid:443' };
const NO_ANSWER: FailureCause = { kind: 'dns', code: 'EAI_AGAIN', host: 'api.x.invalid:443' };
const TLS: FailureCause = {
  kind: 'tls',
  code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  host: '127.0.0.1:8443',
};
const UNAUTHORIZED: FailureCause = { kind: 'unauthorized', code: '401' };
const FORBIDDEN: FailureCause = { kind: 'forbidden', code: '403' };

const failed = (org: string, cause?: FailureCause): OrgOutcome => ({
  org,
  status: 'failed',
  cause,
});

describe('failureCause', () => {
  it.each([
    [{ kind: 'network', code: 'ECONNREFUSED', host: '127.0.0.1:9' }, REFUSED],
    [{ kind: 'network', code: 'ENOTFOUND', host: 'api.x.invalid:443' }, NOT_FOUND],
    [{ kind: 'network', code: 'EAI_AGAIN', host: 'api.x.invalid:443' }, NO_ANSWER],
    [{ kind: 'network', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', host: '127.0.0.1:8443' }, TLS],
    [{ kind: 'auth', status: 401 }, UNAUTHORIZED],
    [{ kind: 'auth', status: 403 }, FORBIDDEN],
    [{ kind: 'network', code: 'ECONNRESET', host: '127.0.0.1:9' }, undefined],
    [{ kind: 'timeout' }, undefined],
    [{ kind: 'http', status: 404 }, undefined],
    [{ kind: 'deadline' }, undefined],
    [undefined, undefined],
  ] as const)('%j is %j', (failure, expected) => {
    expect(failureCause(failure)).toEqual(expected);
  });
});

describe('commonFailure: every org failed for one cause, said once', () => {
  const API_URL = 'Is --api-url right?';
  const TOKEN = 'Is the token for this API?';
  it.each([
    [
      [failed('acme', NOT_FOUND), failed('beta', NOT_FOUND)],
      "all 2 orgs failed the same way: the API's host name api.x.invalid does not resolve (ENOTFOUND)",
      `${API_URL} Check the host name, and that DNS resolves it where envsync runs.`,
    ],
    [
      [failed('acme', NO_ANSWER)],
      "org acme failed: the API's host name api.x.invalid could not be resolved (EAI_AGAIN)",
      `${API_URL} Check the host name, and that DNS resolves it where envsync runs.`,
    ],
    [
      [failed('acme', TLS), failed('beta', TLS)],
      'all 2 orgs failed the same way: the TLS certificate of the API at 127.0.0.1:8443 cannot be verified (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
      `${API_URL} For a service behind a private CA, add the CA with --ca-file (verification cannot be turned off).`,
    ],
    [
      [failed('acme', UNAUTHORIZED)],
      'org acme failed: the token was refused (401)',
      `${TOKEN} Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.`,
    ],
    [
      [failed('acme', FORBIDDEN), failed('beta', FORBIDDEN)],
      'all 2 orgs failed the same way: the token was refused (403)',
      `${TOKEN} It is allowed none of these orgs.`,
    ],
  ] as const)('%j: %s', (orgs, message, hint) => {
    const failure = commonFailure(orgs);
    expect(failure?.message).toBe(message);
    expect(failure?.hint).toBe(hint);
    expect(failure?.orgs).toEqual(orgs.map((o) => o.org));
    expect(failure?.kind).toBe(orgs[0]?.cause?.kind);
  });

  it.each([
    ['no org', []],
    ['only invalid orgs', [{ org: 'bad', status: 'invalid' }]],
    ['an org that is ok', [failed('acme', REFUSED), { org: 'beta', status: 'ok' }]],
    ['an org that failed otherwise', [failed('acme', REFUSED), failed('beta')]],
    ['two causes', [failed('acme', UNAUTHORIZED), failed('beta', FORBIDDEN)]],
    ['two codes of one kind', [failed('acme', NOT_FOUND), failed('beta', NO_ANSWER)]],
    [
      'two addresses',
      [failed('acme', REFUSED), failed('beta', { ...REFUSED, host: '127.0.0.1:10' })],
    ],
    ['one org refused 403: most likely its permission', [failed('acme', FORBIDDEN)]],
  ] as const)('none for %s', (_title, orgs) => {
    expect(commonFailure(orgs as readonly OrgOutcome[])).toBeUndefined();
  });

  it("leaves out of an output's sections the orgs it names that have nothing else to show", () => {
    const failure = commonFailure([failed('acme', REFUSED), failed('beta', REFUSED)]);
    const org = (name: string, more = {}) => ({ org: name, changes: [], errors: [], ...more });
    expect(saidOnce(failure, org('acme'))).toBe(true);
    expect(saidOnce(failure, org('gamma'))).toBe(false);
    expect(saidOnce(failure, org('acme', { changes: [{}] }))).toBe(false);
    expect(saidOnce(failure, org('acme', { archives: [{}] }))).toBe(false);
    expect(saidOnce(undefined, org('acme'))).toBe(false);
  });

  it('names up to a limit, then says how many more', () => {
    expect(someNames(['a', 'b'], 3)).toBe('a, b');
    expect(someNames(['a', 'b', 'c', 'd', 'e'], 3)).toBe('a, b, c and 2 more');
  });
});

describe('failures said once for some orgs (a pass some of whose orgs did not fail so)', () => {
  it('one line per cause, naming its orgs; a 403, another failure and an ok org have none', () => {
    const lines = failuresSaidOnce([
      failed('acme', REFUSED),
      { org: 'beta', status: 'ok' },
      failed('gamma', REFUSED),
      failed('delta', FORBIDDEN),
      failed('eps'),
      failed('zeta', UNAUTHORIZED),
    ]);
    expect(lines).toEqual([
      '2 orgs failed: the API at 127.0.0.1:9 refused the connection (ECONNREFUSED) (acme, gamma)',
      'org zeta failed: the token was refused (401)',
    ]);
  });
});
