/**
 * A relative --token-file or --ca-file (or ENVSYNC_TOKEN_FILE, ENVSYNC_CA_FILE) is found from the
 * command's working directory, the `cwd` of its context, never from the process's: `main` runs
 * here with a folder of its own, which is not this process's working directory. Messages name the
 * file as it was given.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCaFile } from '../../src/config/ca-file.ts';
import { readToken } from '../../src/config/token.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { ACME } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'relative-files-token-5e1c';
const CA = fileURLToPath(new URL('../fixtures/tls/ca.pem', import.meta.url));

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;

beforeAll(async () => {
  tmp = await tempDir();
  await tmp.write('secrets/token', `${TOKEN}\n`);
  await tmp.write('tls/ca.pem', await readFile(CA));
  await tmp.write('manifests/acme.yaml', ACME);
  api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
});
afterAll(async () => {
  await api.close();
  await tmp.cleanup();
});

describe('relative files are read from the command directory', () => {
  it('the process directory holds none of them, so a read from there would fail', () => {
    expect(path.resolve('secrets/token')).not.toBe(tmp.path('secrets/token'));
    expect(existsSync('secrets/token')).toBe(false);
    expect(existsSync('tls/ca.pem')).toBe(false);
  });

  it('readToken and readCaFile resolve against the directory given', async () => {
    expect(await readToken('secrets/token', {}, tmp.dir)).toBe(TOKEN);
    expect(await readCaFile('tls/ca.pem', tmp.dir)).toBe(await readFile(CA, 'utf8'));
    // An absolute path is read as it is, whatever the directory.
    expect(await readToken(tmp.path('secrets/token'), {}, '/')).toBe(TOKEN);
    expect(await readCaFile(undefined, tmp.dir)).toBeUndefined();
  });

  it('their errors name the file as given', async () => {
    await expect(readToken('secrets/nope', {}, tmp.dir)).rejects.toThrow(
      /^token file secrets\/nope cannot be read \(ENOENT\)$/,
    );
    await expect(readCaFile('tls/nope.pem', tmp.dir)).rejects.toThrow(
      /^--ca-file tls\/nope\.pem: cannot be read \(ENOENT\)$/,
    );
  });

  it.each([
    ['--token-file', ['--token-file', 'secrets/token'], {}],
    ['ENVSYNC_TOKEN_FILE', [], { ENVSYNC_TOKEN_FILE: 'secrets/token' }],
  ] as const)('a plan with a relative token file from %s', async (_from, args, env) => {
    const result = await envsyncInProcess(
      ['plan', '--manifests', 'manifests', '--api-url', api.url, '--state', 'state.json', ...args],
      { cwd: tmp.dir, env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Plan: 2 to create');
  });

  it('a relative --ca-file that is not there: the command says which, as given', async () => {
    const result = await envsyncInProcess(
      [
        'plan',
        '--manifests',
        'manifests',
        '--api-url',
        api.url,
        '--ca-file',
        'tls/missing.pem',
        '--token-file',
        'secrets/token',
      ],
      { cwd: tmp.dir },
    );
    expect(result).toMatchObject({
      code: 1,
      stderr: 'envsync plan: --ca-file tls/missing.pem: cannot be read (ENOENT)\n',
    });
  });
});
