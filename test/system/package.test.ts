/**
 * The package as a user gets it: `npm pack` of a copy of the checkout, installed globally into a
 * temporary prefix and run for real (under node_modules only the compiled JavaScript runs).
 */
import { existsSync } from 'node:fs';
import { cp, readFile, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, SHELL_ENV, type CliResult } from '../helpers/cli.ts';
import { spawnEmulator, type SpawnedEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (
  JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as { version: string }
).version;

/** Left out of the copy that is packed: installed, built or local to this checkout. */
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', 'bench/out', 'coverage', '.envsync']);

const ENV = SHELL_ENV;
const NPM_FLAGS = ['--no-audit', '--no-fund', '--no-update-notifier'];

const tmp = await tempDir('envsync-package-');
let tarball = '';
let entries: string[] = [];
let bin = '';
let emulator: SpawnedEmulator | undefined;

/** Throws, with the output, unless the step exited 0 (for the set-up, outside any test). */
function mustSucceed(result: CliResult, what: string): CliResult {
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.code !== 0)
    throw new Error(`${what} exited ${result.code ?? result.signal}\n${output}`);
  return result;
}

beforeAll(async () => {
  const checkout = tmp.path('checkout');
  await cp(REPO, checkout, {
    recursive: true,
    filter: (source) => !NOT_COPIED.has(path.relative(REPO, source)),
  });
  await symlink(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
  const pack = await runProcess('npm', ['pack', '--pack-destination', tmp.path(), ...NPM_FLAGS], {
    env: ENV,
    cwd: checkout,
    timeoutMs: 240_000,
  });
  mustSucceed(pack, 'npm pack');
  const tarballs = (await readdir(tmp.dir)).filter((name) => name.endsWith('.tgz'));
  if (tarballs.length !== 1)
    throw new Error(`npm pack made ${tarballs.join(', ') || 'no tarball'}`);
  tarball = tmp.path(tarballs[0] ?? '');
  const list = await runProcess('tar', ['-tzf', tarball], { env: ENV });
  mustSucceed(list, 'tar -tzf');
  entries = list.stdout.split('\n').filter(Boolean);
  const install = ['install', '--global', '--prefix', tmp.path('prefix'), tarball, ...NPM_FLAGS];
  const where = { env: ENV, cwd: tmp.dir, timeoutMs: 240_000 };
  mustSucceed(await runProcess('npm', install, where), 'npm install --global');
  bin = tmp.path('prefix', 'bin', 'envsync');
}, 600_000);

afterAll(async () => {
  await emulator?.stop('SIGKILL');
  await tmp.cleanup();
});

/** The installed command, run from a folder of its own. */
const envsync = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  runProcess(bin, args, { env: { ...ENV, ...env }, cwd: tmp.dir, timeoutMs: 60_000 });

describe('the package from npm pack', () => {
  it('is named for the version and holds the compiled CLI, the launcher, the docs, the example config and the manifest schema, README, LICENSE and package.json, and no TypeScript', () => {
    expect(path.basename(tarball)).toBe(`envsync-${VERSION}.tgz`);
    expect(entries).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/bin/envsync.js',
        'package/bin/node-version.js',
        'package/dist/cli.js',
        'package/docs/flags.md',
        'package/docs/install.md',
        'package/config/envsync.example.yaml',
        'package/config/manifest.schema.json',
      ]),
    );
    expect(entries.filter((entry) => entry.endsWith('.ts'))).toEqual([]);
    expect(
      entries.filter(
        (entry) =>
          !/^package\/(dist|bin)\/|^package\/docs\/[^/]+\.md$|^package\/[^/]+$|^package\/config\/(envsync\.example\.yaml|manifest\.schema\.json)$/.test(
            entry,
          ),
      ),
    ).toEqual([]);
  });

  it("is what docs/install.md's listing says, line by line", async () => {
    const doc = await readFile(path.join(REPO, 'docs', 'install.md'), 'utf8');
    const block =
      /examples\. `npm pack --dry-run` lists it[^\n]*\n\n {2}```text\n([\s\S]*?)\n {2}```/.exec(
        doc,
      );
    const listed = (block?.[1] ?? '').split('\n').map((line) => line.trim().split(/\s+/)[0] ?? '');
    expect(listed.length).toBeGreaterThan(5);
    // `dir/*.ext` stands for every file of that extension directly in dir.
    const covers = (line: string, file: string) =>
      line.includes('*')
        ? path.dirname(line) === path.dirname(file) &&
          file.endsWith(path.basename(line).replace('*', ''))
        : line === file;
    const files = entries.map((entry) => entry.replace(/^package\//, ''));
    expect(files.filter((file) => !listed.some((line) => covers(line, file)))).toEqual([]);
    expect(listed.filter((line) => !files.some((file) => covers(line, file)))).toEqual([]);
  });

  it('the docs --help points at are installed beside the launcher, and the node package is not', async () => {
    const help = await envsync(['--help']);
    expect(help.stdout).toContain('docs/flags.md, in the package (beside bin/envsync.js)');
    const installed = tmp.path('prefix', 'lib', 'node_modules', 'envsync');
    expect(existsSync(path.join(installed, 'bin', 'envsync.js'))).toBe(true);
    expect(existsSync(path.join(installed, 'docs', 'flags.md'))).toBe(true);
    // A dev dependency: what brings Node 24 to a checkout is no part of the package.
    const manifest = await readFile(path.join(installed, 'package.json'), 'utf8');
    const fields = JSON.parse(manifest) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'])
      expect(Object.keys(fields[field] ?? {}), field).not.toContain('node');
    expect(existsSync(path.join(installed, 'node_modules', 'node'))).toBe(false);
    expect(existsSync(tmp.path('prefix', 'lib', 'node_modules', 'node'))).toBe(false);
  }, 120_000);

  it('is ignored by git where npm pack writes it, in the checkout', async () => {
    const check = ['check-ignore', '--no-index', '--verbose', path.basename(tarball)];
    const ignored = await runProcess('git', check, { env: ENV, cwd: REPO });
    expect(ignored).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\.gitignore:\d+:/) });
  });

  it('installed with npm install -g, envsync --version prints the version', async () => {
    expect(await envsync(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  }, 120_000);

  it('validate reads a copy of examples/manifests, and locates a problem in a broken file', async () => {
    const manifests = tmp.path('manifests');
    await cp(path.join(REPO, 'examples', 'manifests'), manifests, { recursive: true });
    const valid = await envsync(['validate', '--manifests', manifests]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/^valid: \d+ file\(s\), 3 org\(s\)/);

    const broken = tmp.path('broken');
    await tmp.write(
      'broken/acme.yaml',
      'org: acme\nenvironments:\n  - name: prod\n    type: k8s\n    description: x\n',
    );
    const invalid = await envsync(['validate', '--manifests', broken]);
    expect(invalid.code, invalid.stderr).toBe(1);
    expect(`${invalid.stdout}${invalid.stderr}`).toMatch(
      /acme\.yaml:4:11 environments\[0\]\.type: "k8s" is not one of .*\(did you mean "K8S"\?\)/,
    );
  }, 120_000);

  it('emulator --port 0, then plan against it: 2 with --detailed-exitcode, else 0; emulator stops with 0', async () => {
    const options = { bin, env: ENV, cwd: tmp.dir, timeoutMs: 60_000 };
    emulator = await spawnEmulator(['--profile', 'kosli'], options);
    const { url } = emulator;
    const manifests = tmp.path('manifests');
    const args = ['plan', '--manifests', manifests, '--api-url', url];
    const env = { ENVSYNC_TOKEN: 'package-test-token', ENVSYNC_STATE: tmp.path('state.json') };
    const detailed = await envsync([...args, '--detailed-exitcode'], env);
    expect(detailed.code, detailed.stderr).toBe(2);
    expect(detailed.stdout).toMatch(/Plan: [1-9]\d* to create/);
    const plain = await envsync(args, env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(detailed.stdout);

    expect(await emulator.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('npx runs it from the tarball', async () => {
    const result = await runProcess(
      'npx',
      ['--yes', '--cache', tmp.path('npx-cache'), '--package', tarball, 'envsync', '--version'],
      { env: ENV, cwd: tmp.dir, timeoutMs: 240_000 },
    );
    expect(result, result.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  }, 300_000);
});
