/**
 * The launcher (bin/envsync.js) checks the Node version before loading anything else, so that an
 * older Node prints one line saying what to install. Checked as a function of a version string,
 * and for real with every older `node` this machine has (Debian's, here). And a checkout on such
 * a Node: npm runs its scripts with the Node 24 of the `node` dev dependency, and `npm test`'s
 * first step (scripts/check-node.js) says what to do when that one is missing.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lowestNode, nodeVersionProblem, RECOMMENDED_NODE_MAJOR } from '../../bin/node-version.js';
import { runProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const LAUNCHER = path.join(REPO, 'bin', 'envsync.js');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');
const PACKAGE = JSON.parse(read('package.json')) as {
  version: string;
  engines: { node: string };
  scripts: Record<string, string>;
  allowScripts: Record<string, boolean>;
} & Partial<
  Record<
    'dependencies' | 'devDependencies' | 'optionalDependencies' | 'peerDependencies',
    Record<string, string>
  >
>;
const ENGINES = PACKAGE.engines.node;
const ENV = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' };

/** Every `node` on PATH (and the usual system places) older than package.json's engines allow. */
function olderNodes(): { node: string; version: string }[] {
  const candidates = [
    ...ENV.PATH.split(path.delimiter).map((dir) => path.join(dir, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ].filter((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  return [...new Set(candidates.map((candidate) => realpathSync(candidate)))]
    .map((node) => {
      const args = ['-p', 'process.versions.node'];
      return { node, version: execFileSync(node, args, { encoding: 'utf8' }).trim() };
    })
    .filter(({ version }) => nodeVersionProblem(version, ENGINES) !== undefined);
}

describe('the Node version check, as a function', () => {
  it('names the version needed, the version running and how to get Node 24, in one line', () => {
    expect(nodeVersionProblem('20.19.0', '>=22.22')).toBe(
      'envsync needs Node.js 22.22 or newer (this is 20.19.0): install Node.js 24 LTS, e.g. `nvm install 24`, or from https://nodejs.org/',
    );
    expect(nodeVersionProblem('22.22.0', '>=22.22.1')).toMatch(/needs Node\.js 22\.22\.1 or/);
  });

  const REFUSED = ['18.0.0', '18.20.8', '20.20.2', '22.21.9', 'v22.0.0'];
  it.each(REFUSED)('refuses %s, to the patch', (version) => {
    const line = `^envsync needs Node\\.js 22\\.22 or newer \\(this is ${version}\\): [^\\n]+$`;
    expect(nodeVersionProblem(version, '>=22.22')).toMatch(new RegExp(line));
  });

  const ACCEPTED = ['22.22.0', '22.22.1', '22.30.0', '23.0.0', '24.11.1', '30.1.2'];
  it.each(ACCEPTED)('accepts %s', (version) => {
    expect(nodeVersionProblem(version, '>=22.22')).toBeUndefined();
  });

  it("reads package.json's engines, which this Node and the .nvmrc's satisfy; not a range it cannot read", () => {
    expect(nodeVersionProblem(process.versions.node, ENGINES)).toBeUndefined();
    expect(read('.nvmrc').trim()).toBe(String(RECOMMENDED_NODE_MAJOR));
    expect(nodeVersionProblem(`${RECOMMENDED_NODE_MAJOR}.0.0`, ENGINES)).toBeUndefined();
    expect(() => lowestNode('^22.22')).toThrow(/engines.node is "\^22\.22"/);
  });
});

// Debian's Node 20 on this machine. Where there is none, the function tests above stand in.
const olds = olderNodes();
const which = olds.map((old) => `${old.version} at ${old.node}`).join(', ') || 'none found';

describe('the launcher, run by a real Node', () => {
  it(`an older Node (${which}) prints one line on stderr saying what to install, exits 1`, async () => {
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const { node, version } of olds) {
      for (const args of [['--version'], ['run', '--manifests', 'examples/manifests']]) {
        const result = await runProcess(node, [LAUNCHER, ...args], { env: ENV, cwd: REPO });
        seen.push({ node, args, ...result });
        const stderr = `${nodeVersionProblem(version, ENGINES)}\n`;
        expected.push({ node, args, code: 1, signal: null, stdout: '', stderr });
      }
    }
    expect(seen).toEqual(expected);
  });

  it('Node 24 runs the CLI through it: --version and validate', async () => {
    const version = await runProcess(process.execPath, [LAUNCHER, '--version'], { env: ENV });
    expect(version).toMatchObject({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
    const examples = path.join(REPO, 'examples', 'manifests');
    const args = [LAUNCHER, 'validate', '--manifests', examples];
    const validate = await runProcess(process.execPath, args, { env: ENV });
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/^valid: /);
  });

  it('runs dist/cli.js when it is there (the package), else src/cli.ts (a checkout)', async () => {
    const tmp = await tempDir('envsync-launcher-');
    try {
      await mkdir(tmp.path('bin'));
      for (const file of ['bin/envsync.js', 'bin/node-version.js', 'package.json']) {
        await copyFile(path.join(REPO, file), tmp.path(file));
      }
      await chmod(tmp.path('bin', 'envsync.js'), 0o755);
      const echo = (name: string) =>
        `process.stdout.write(\`${name} \${process.argv.slice(2).join(' ')}\\n\`);\n`;
      await tmp.write('src/cli.ts', echo('src'));
      const run = () =>
        runProcess(process.execPath, [tmp.path('bin', 'envsync.js'), 'plan', '-x'], { env: ENV });
      expect(await run()).toMatchObject({ code: 0, stdout: 'src plan -x\n', stderr: '' });
      await tmp.write('dist/cli.js', echo('dist'));
      expect(existsSync(tmp.path('dist', 'cli.js'))).toBe(true);
      expect(await run()).toMatchObject({ code: 0, stdout: 'dist plan -x\n', stderr: '' });
    } finally {
      await tmp.cleanup();
    }
  });
});

describe('a checkout on an older Node', () => {
  /** The Node the `node` dev dependency installed, as its package names it. */
  const bundled = (JSON.parse(read('node_modules/node/package.json')) as { version: string })
    .version;
  /**
   * A shell's PATH with `old`'s folder first and none of the node_modules/.bin folders `npm test`
   * put on it, and none of the variables npm sets for a script's children.
   */
  const shellEnv = (old: string): NodeJS.ProcessEnv => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
    PATH: [
      path.dirname(old),
      ...ENV.PATH.split(path.delimiter).filter(
        (dir) => !dir.split(path.sep).includes('node_modules'),
      ),
    ].join(path.delimiter),
  });

  it('the node dev dependency is Node 24, for development only: the package does not need it', () => {
    const major = RECOMMENDED_NODE_MAJOR;
    expect(PACKAGE.devDependencies?.['node']).toMatch(new RegExp(`^\\^${major}\\.`));
    expect(bundled).toMatch(new RegExp(`^${major}\\.`));
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
      expect(Object.keys(PACKAGE[field] ?? {}), field).not.toContain('node');
    }
    // Its binary comes with its install script, which npm runs without a notice.
    expect(PACKAGE.allowScripts).toEqual({ node: true });
  });

  it(`npm, run by an older Node (${which}), runs the scripts with the Node 24 of node_modules/.bin`, async () => {
    const seen: unknown[] = [];
    for (const old of olds) {
      const args = ['exec', '--offline', '--', 'node', '-p', 'process.versions.node'];
      const result = await runProcess('npm', args, { env: shellEnv(old.node), cwd: REPO });
      seen.push({ old: old.version, code: result.code, stdout: result.stdout });
    }
    expect(seen).toEqual(
      olds.map((old) => ({ old: old.version, code: 0, stdout: `${bundled}\n` })),
    );
  });

  it(`npm test's first step on an older Node (${which}) with no Node 24 beside it: what to do, in two lines, exit 1`, async () => {
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const old of olds) {
      // The test script as npm runs it, with no node_modules/.bin on PATH: as after an install
      // that skipped the `node` package's install script.
      const result = await runProcess('sh', ['-c', PACKAGE.scripts['test'] ?? ''], {
        env: shellEnv(old.node),
        cwd: REPO,
      });
      seen.push({ old: old.version, ...result });
      expected.push({
        old: old.version,
        code: 1,
        signal: null,
        stdout: '',
        stderr:
          `${nodeVersionProblem(old.version, ENGINES)}\n` +
          'In a checkout, npm runs the scripts with the Node 24 of the "node" dev dependency ' +
          '(node_modules/.bin/node), which is missing: run `npm ci` again, with its install scripts.\n',
      });
    }
    expect(seen).toEqual(expected);
  });

  it('npm test starts with that check, which a Node that engines allow passes in silence', async () => {
    expect(PACKAGE.scripts['test']).toMatch(/^node scripts\/check-node\.js && /);
    const check = [path.join(REPO, 'scripts', 'check-node.js')];
    const result = await runProcess(process.execPath, check, { env: ENV, cwd: REPO });
    expect(result).toEqual({ code: 0, signal: null, stdout: '', stderr: '' });
  });
});
