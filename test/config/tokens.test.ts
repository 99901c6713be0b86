/**
 * The tokens (config/tokens.ts) on real temporary folders: which token each org's requests carry,
 * where it came from, every token there is to mask; and relative files (--token-file, --ca-file,
 * their variables) found from the command's directory, the `cwd` of its context, never from the
 * process's, named as given.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCaFile } from '../../src/commands/connect.ts';
import {
  readSecretFile,
  readToken,
  readTokens,
  tokenFor,
  tokenGetter,
  tokenSourceOf,
  tokensOf,
  type TokenSet,
} from '../../src/config/tokens.ts';
import { ConfigError, NoTokenError } from '../../src/runtime/errors.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { ACME as MANIFEST } from '../helpers/fixtures.ts';
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

  it('takes the default token from --token-file before ENVSYNC_TOKEN; each token once', async () => {
    await tmp.write('default', `${FALLBACK}\n`);
    const env = { ENVSYNC_TOKEN: 'Zz9Yy8Xx7Ww6Vv5U' };
    const set = await readTokens(
      { tokenDir: tmp.path('tokens'), tokenFile: 'default' },
      env,
      tmp.dir,
    );
    expect(tokenFor(set, 'gamma')).toEqual({ token: FALLBACK, source: 'token-file' });
    expect(tokensOf(set)).not.toContain(env.ENVSYNC_TOKEN);
    await tmp.write('default', ACME);
    const same = await readTokens({ tokenDir: 'tokens', tokenFile: 'default' }, {}, tmp.dir);
    expect(tokensOf(same).toSorted()).toEqual([ACME, BETA].toSorted());
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

  it('reads only names an org may have (dotfiles, `..data`, names with spaces are never read), through links', async () => {
    await mkdir(tmp.path('tokens/..2026_05_01'), { recursive: true });
    await tmp.write('tokens/..2026_05_01/gamma', FALLBACK);
    await symlink('..2026_05_01', tmp.path('tokens/..data'));
    await tmp.write('tokens/.delta', FALLBACK);
    await tmp.write('tokens/not an org', FALLBACK);
    const set = await readTokens({ tokenDir: 'tokens' }, {}, tmp.dir);
    expect([...set.orgs.keys()]).toEqual(['acme', 'beta']);
    expect(tokensOf(set)).not.toContain(FALLBACK);
    // A link to the file is followed, as a Kubernetes secret volume has one per key.
    await symlink('..data/gamma', tmp.path('tokens/gamma'));
    const linked = await readTokens({ tokenDir: 'tokens' }, {}, tmp.dir);
    expect(tokenFor(linked, 'gamma')).toEqual({ token: FALLBACK, source: 'token-dir:gamma' });
  });

  it('a file that is no usable token makes its org fail, not fall back, with why and never the token', async () => {
    await tmp.write('tokens/beta', `Bearer ${BETA}`);
    await tmp.write('tokens/gamma', '\n');
    await tmp.write('tokens/delta', 'Kq3Zr8"Wm1Tx5Pb7N');
    await mkdir(tmp.path('tokens/epsilon'));
    const set = await readTokens({ tokenDir: 'tokens' }, { ENVSYNC_TOKEN: FALLBACK }, tmp.dir);
    const errors = chosen(set, ['beta', 'gamma', 'delta', 'epsilon']);
    expect(Object.values(errors).map((e) => ('error' in e ? e.error : e))).toEqual([
      'token file tokens/beta: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)',
      'token file tokens/gamma is empty',
      'token file tokens/delta: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)',
      "token file tokens/epsilon is a directory, not a regular file: make it a file that holds epsilon's token",
    ]);
    expect(tokensOf(set).toSorted()).toEqual([ACME, FALLBACK].toSorted());
    expect(JSON.stringify(errors).includes('Kq3Zr8')).toBe(false);
  });

  it('a directory that cannot be read, or a broken or missing default token, fails the whole read', async () => {
    await expect(readTokens({ tokenDir: 'nowhere' }, {}, tmp.dir)).rejects.toThrow(
      new ConfigError('token directory nowhere cannot be read (ENOENT)'),
    );
    await expect(
      readTokens({ tokenDir: 'tokens', tokenFile: 'missing' }, {}, tmp.dir),
    ).rejects.toThrow('token file missing cannot be read (ENOENT)');
    await expect(readTokens({}, {}, tmp.dir)).rejects.toThrow(
      'no API token: set ENVSYNC_TOKEN, or --token-file PATH (env ENVSYNC_TOKEN_FILE)',
    );
  });

  it('without --token-dir, one token for every org', async () => {
    const set = await readTokens({}, { ENVSYNC_TOKEN: FALLBACK }, tmp.dir);
    expect(chosen(set, ['acme', 'zeta'])).toEqual({
      acme: { token: FALLBACK, source: 'env ENVSYNC_TOKEN' },
      zeta: { token: FALLBACK, source: 'env ENVSYNC_TOKEN' },
    });
  });
});

describe('secret files', () => {
  it('are read trimmed; an empty or unreadable one says what to do, never the secret', async () => {
    await tmp.write('secret', ` ${ACME}\n`);
    await tmp.write('empty', '\n');
    const read = (file: string) =>
      readSecretFile('--notify-secret-file', tmp.path(file), 'signing secret');
    expect(await read('secret')).toBe(ACME);
    await expect(read('empty')).rejects.toThrow(
      `--notify-secret-file ${tmp.path('empty')} is empty; put the signing secret in it`,
    );
    await expect(read('nope')).rejects.toThrow(
      / cannot be read \(ENOENT\); pass a readable file or leave the flag out$/,
    );
  });
});

describe('relative files are read from the command directory', () => {
  const CA = fileURLToPath(new URL('../fixtures/tls/ca.pem', import.meta.url));

  it('readToken and readCaFile resolve against the directory given, and name the file as given', async () => {
    await tmp.write('secrets/token', `${FALLBACK}\n`);
    await tmp.write('tls/ca.pem', await readFile(CA));
    // The process directory holds none of them, so a read from there would fail.
    expect(existsSync('secrets/token') || existsSync('tls/ca.pem')).toBe(false);
    expect(await readToken('secrets/token', {}, tmp.dir)).toBe(FALLBACK);
    expect(await readCaFile('tls/ca.pem', tmp.dir)).toBe(await readFile(CA, 'utf8'));
    // An absolute path is read as it is, whatever the directory.
    expect(await readToken(tmp.path('secrets/token'), {}, '/')).toBe(FALLBACK);
    expect(await readCaFile(undefined, tmp.dir)).toBeUndefined();
    await expect(readToken('secrets/nope', {}, tmp.dir)).rejects.toThrow(
      /^token file secrets\/nope cannot be read \(ENOENT\)$/,
    );
  });

  it('a plan with a relative token file from the flag or the variable; a relative --ca-file that is not there', async () => {
    await tmp.write('secrets/token', `${FALLBACK}\n`);
    await tmp.write('manifests/acme.yaml', MANIFEST);
    const api = await startTestEmulator({ tokens: [{ token: FALLBACK, orgs: null }] });
    try {
      const plan = ['plan', '--manifests', 'manifests', '--api-url', api.url, '--state', 's.json'];
      for (const [args, env] of [
        [['--token-file', 'secrets/token'], {}],
        [[], { ENVSYNC_TOKEN_FILE: 'secrets/token' }],
      ] as const) {
        const result = await envsyncInProcess([...plan, ...args], { cwd: tmp.dir, env });
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toContain('Plan: 2 to create');
      }
      const ca = ['--ca-file', 'tls/missing.pem', '--token-file', 'secrets/token'];
      expect(await envsyncInProcess([...plan, ...ca], { cwd: tmp.dir })).toMatchObject({
        code: 1,
        stderr: 'envsync plan: --ca-file tls/missing.pem: cannot be read (ENOENT)\n',
      });
    } finally {
      await api.close();
    }
  });
});
