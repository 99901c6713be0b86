/**
 * readTokens (config/token-dir.ts) on real temporary folders, and what config/org-tokens.ts makes of
 * what it read: which token each org's requests carry, where it came from, and every token there
 * is to mask.
 */
import { mkdir, symlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTokens, tokenGetter } from '../../src/config/token-dir.ts';
import {
  oneToken,
  tokenFor,
  tokenSourceOf,
  tokensOf,
  type TokenSet,
} from '../../src/config/org-tokens.ts';
import { ConfigError, NoTokenError } from '../../src/runtime/errors.ts';
import { tempDir } from '../helpers/tmp.ts';

const ACME = 'fF9q4Tq9Lm2Zx7Vb';
const BETA = 'Kq3Zr8Wm1Tx5Pb7N';
const FALLBACK = 'Hw6Yc2Jd9Rn4Qs8G';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
  await tmp.write('tokens/acme', `  ${ACME}\n`);
  await tmp.write('tokens/beta', BETA);
});
afterEach(() => tmp.cleanup());

/** Each org's token and source, or its error, as the set gives them. */
function chosen(set: TokenSet, orgs: readonly string[]) {
  return Object.fromEntries(orgs.map((org) => [org, tokenFor(set, org)]));
}

describe('readTokens', () => {
  it("gives each org with a file its token, trimmed, from `token-dir:ORG`; the others the default's", async () => {
    const set = await readTokens({ tokenDir: 'tokens' }, { ENVSYNC_TOKEN: FALLBACK }, tmp.dir);
    expect(chosen(set, ['acme', 'beta', 'gamma'])).toEqual({
      acme: { token: ACME, source: 'token-dir:acme' },
      beta: { token: BETA, source: 'token-dir:beta' },
      gamma: { token: FALLBACK, source: 'env ENVSYNC_TOKEN' },
    });
    expect(tokensOf(set).toSorted()).toEqual([ACME, BETA, FALLBACK].toSorted());
    expect(tokenSourceOf(set, 'gamma')).toBe('env ENVSYNC_TOKEN');
  });

  it('takes the default token from --token-file before ENVSYNC_TOKEN, as without a directory', async () => {
    await tmp.write('default', `${FALLBACK}\n`);
    const set = await readTokens(
      { tokenDir: tmp.path('tokens'), tokenFile: 'default' },
      { ENVSYNC_TOKEN: 'Zz9Yy8Xx7Ww6Vv5U' },
      tmp.dir,
    );
    expect(tokenFor(set, 'gamma')).toEqual({ token: FALLBACK, source: 'token-file' });
    expect(tokensOf(set)).not.toContain('Zz9Yy8Xx7Ww6Vv5U');
  });

  it('without a default token (ENVSYNC_TOKEN unset or blank), an org with no file has none, and says why', async () => {
    for (const env of [{}, { ENVSYNC_TOKEN: '  ' }]) {
      const set = await readTokens({ tokenDir: 'tokens' }, env, tmp.dir);
      expect(set.fallback).toBeUndefined();
      expect(tokenFor(set, 'gamma')).toEqual({
        error:
          'no token: no file gamma in token directory tokens, and no default token (--token-file or ENVSYNC_TOKEN)',
      });
      expect(tokenSourceOf(set, 'gamma')).toBeNull();
      expect(tokensOf(set).toSorted()).toEqual([ACME, BETA].toSorted());
      const getToken = tokenGetter(set);
      expect(getToken('acme')).toBe(ACME);
      expect(() => getToken('gamma')).toThrow(NoTokenError);
    }
  });

  it('reads only names an org may have: dotfiles, `..data` and names with spaces are never read', async () => {
    await mkdir(tmp.path('tokens/..2026_05_01'), { recursive: true });
    await tmp.write('tokens/..2026_05_01/gamma', FALLBACK);
    await symlink('..2026_05_01', tmp.path('tokens/..data'));
    await tmp.write('tokens/.delta', FALLBACK);
    await tmp.write('tokens/not an org', FALLBACK);
    const set = await readTokens({ tokenDir: 'tokens' }, {}, tmp.dir);
    expect([...set.orgs.keys()]).toEqual(['acme', 'beta']);
    expect(tokensOf(set)).not.toContain(FALLBACK);
  });

  it('follows a link to the file, as a Kubernetes secret volume has one per key', async () => {
    await mkdir(tmp.path('secret/..2026_05_01'), { recursive: true });
    await tmp.write('secret/..2026_05_01/gamma', `${FALLBACK}\n`);
    await symlink('..2026_05_01', tmp.path('secret/..data'));
    await symlink('..data/gamma', tmp.path('secret/gamma'));
    const set = await readTokens({ tokenDir: 'secret' }, {}, tmp.dir);
    expect(chosen(set, ['gamma'])).toEqual({
      gamma: { token: FALLBACK, source: 'token-dir:gamma' },
    });
  });

  it('a file that is no usable token makes its org fail, not fall back, with why and never the token', async () => {
    await tmp.write('tokens/beta', `Bearer ${BETA}`);
    await tmp.write('tokens/gamma', '\n');
    await tmp.write('tokens/delta', 'Kq3Zr8"Wm1Tx5Pb7N');
    await mkdir(tmp.path('tokens/epsilon'));
    const set = await readTokens({ tokenDir: 'tokens' }, { ENVSYNC_TOKEN: FALLBACK }, tmp.dir);
    const errors = chosen(set, ['beta', 'gamma', 'delta', 'epsilon']);
    expect(errors).toEqual({
      beta: {
        error:
          'token file tokens/beta: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)',
      },
      gamma: { error: 'token file tokens/gamma is empty' },
      delta: {
        error:
          'token file tokens/delta: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)',
      },
      epsilon: {
        error:
          "token file tokens/epsilon is a directory, not a regular file: make it a file that holds epsilon's token",
      },
    });
    expect(tokensOf(set).toSorted()).toEqual([ACME, FALLBACK].toSorted());
    expect(JSON.stringify(errors).includes('Kq3Zr8')).toBe(false);
  });

  it('a directory that cannot be read, or a default token that is broken, fails the whole read', async () => {
    await expect(readTokens({ tokenDir: 'nowhere' }, {}, tmp.dir)).rejects.toThrow(
      new ConfigError('token directory nowhere cannot be read (ENOENT)'),
    );
    await expect(
      readTokens({ tokenDir: 'tokens', tokenFile: 'missing' }, {}, tmp.dir),
    ).rejects.toThrow('token file missing cannot be read (ENOENT)');
  });

  it('without --token-dir, one token for every org, and none is an error as before', async () => {
    const set = await readTokens({}, { ENVSYNC_TOKEN: FALLBACK }, tmp.dir);
    expect(chosen(set, ['acme', 'zeta'])).toEqual({
      acme: { token: FALLBACK, source: 'env ENVSYNC_TOKEN' },
      zeta: { token: FALLBACK, source: 'env ENVSYNC_TOKEN' },
    });
    await expect(readTokens({}, {}, tmp.dir)).rejects.toThrow(
      'no API token: set ENVSYNC_TOKEN, or --token-file PATH (env ENVSYNC_TOKEN_FILE)',
    );
  });
});

describe('org-tokens', () => {
  it('lists each token once, the default too, and only tokens', () => {
    const set: TokenSet = {
      dir: 'd',
      orgs: new Map([
        ['acme', { token: ACME, source: 'token-dir:acme' }],
        ['beta', { token: ACME, source: 'token-dir:beta' }],
        ['gamma', { error: 'token file d/gamma is empty' }],
      ]),
      fallback: { token: FALLBACK, source: 'token-file' },
    };
    expect(tokensOf(set)).toEqual([ACME, FALLBACK]);
    expect(tokenSourceOf(set, 'beta')).toBe('token-dir:beta');
    expect(tokenSourceOf(set, 'gamma')).toBeNull();
    expect(tokenSourceOf(set, 'delta')).toBe('token-file');
    expect(tokensOf(oneToken(ACME, 'emulator'))).toEqual([ACME]);
  });
});
