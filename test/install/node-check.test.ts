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
import { afterEach, describe, expect, it } from 'vitest';
import { lowestNode, nodeVersionProblem, RECOMMENDED_NODE_MAJOR } from '../../bin/node-version.js';
import { runProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const LAUNCHER = path.join(REPO, 'bin', 'envsync.js');
const PACKAGE = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
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
    ...(process.env['PATH'] ?? '').split(path.delimiter).map((dir) => path.join(dir, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ];
  const seen = new Set<string>();
  const found: { node: string; version: string }[] = [];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathSync(candidate);
    if (seen.has(real)) continue;
    seen.add(real);
    const version = execFileSync(real, ['-p', 'process.versions.node'], {
      encoding: 'utf8',
    }).trim();
    if (nodeVersionProblem(version, ENGINES) !== undefined) found.push({ node: real, version });
  }
  return found;
}

describe('the Node version check, as a function', () => {
  it('names the version needed, the version running and how to get Node 24, in one line', () => {
    expect(nodeVersionProblem('20.19.0', '>=22.22')).toBe(
      'envsync needs Node.js 22.22 or newer (this is 20.19.0): install Node.js 24 LTS, e.g. `nvm install 24`, or from https://nodejs.org/',
    );
    expect(nodeVersionProblem('22.22.0', '>=22.22.1')).toMatch(/needs Node\.js 22\.22\.1 or/);
  });

  it.each(['18.0.0', '18.20.8', '20.20.2', '22.21.9', 'v22.0.0'])(
    'refuses %s, to the patch',
    (version) => {
      expect(nodeVersionProblem(version, '>=22.22')).toMatch(
        new RegExp(`^envsync needs Node\\.js 22\\.22 or newer \\(this is ${version}\\): [^\\n]+$`),
      );
    },
  );

  it.each(['22.22.0', '22.22.1', '22.30.0', '23.0.0', '24.11.1', '30.1.2'])(
    'accepts %s',
    (version) => {
      expect(nodeVersionProblem(version, '>=22.22')).toBeUndefined();
    },
  );

  it("reads package.json's engines, which the Node running the tests satisfies", () => {
    expect(() => lowestNode(ENGINES)).not.toThrow();
    expect(nodeVersionProblem(process.versions.node, ENGINES)).toBeUndefined();
  });

  it('a range it cannot read is an error naming it, not a pass', () => {
    expect(() => lowestNode('^22.22')).toThrow(/engines.node is "\^22\.22"/);
  });

  it('.nvmrc names the Node the message recommends, which engines allow', () => {
    expect(readFileSync(path.join(REPO, '.nvmrc'), 'utf8').trim()).toBe(
      String(RECOMMENDED_NODE_MAJOR),
    );
    expect(nodeVersionProblem(`${RECOMMENDED_NODE_MAJOR}.0.0`, ENGINES)).toBeUndefined();
  });
});

// Debian's Node 20 on this machine. Where there is none, the function tests above stand in.
const olds = olderNodes();
const which = olds.map((old) => `${old.version} at ${old.node}`).join(', ') || 'none found';

describe('the launcher, run by a real Node', () => {
  const dirs: { cleanup: () => Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => dir.cleanup()));
  });

  it(`an older Node (${which}) prints one line on stderr saying what to install, exits 1`, async () => {
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const old of olds) {
      for (const args of [['--version'], ['run', '--manifests', 'examples/manifests']]) {
        const { code, stdout, stderr } = await runProcess(old.node, [LAUNCHER, ...args], {
          env: ENV,
          cwd: REPO,
        });
        seen.push({ node: old.node, args, code, stdout, stderr });
        expected.push({
          node: old.node,
          args,
          code: 1,
          stdout: '',
          stderr: `${nodeVersionProblem(old.version, ENGINES)}\n`,
        });
      }
    }
    expect(seen).toEqual(expected);
  });

  it('Node 24 runs the CLI through it: --version and validate', async () => {
    const version = await runProcess(process.execPath, [LAUNCHER, '--version'], { env: ENV });
    expect(version).toMatchObject({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
    const validate = await runProcess(
      process.execPath,
      [LAUNCHER, 'validate', '--manifests', path.join(REPO, 'examples', 'manifests')],
      { env: ENV },
    );
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/^valid: /);
  });

  it('runs dist/cli.js when it is there (the package), else src/cli.ts (a checkout)', async () => {
    const tmp = await tempDir('envsync-launcher-');
    dirs.push(tmp);
    await mkdir(tmp.path('bin'));
    for (const file of ['envsync.js', 'node-version.js']) {
      await copyFile(path.join(REPO, 'bin', file), tmp.path('bin', file));
    }
    await chmod(tmp.path('bin', 'envsync.js'), 0o755);
    await copyFile(path.join(REPO, 'package.json'), tmp.path('package.json'));
    await tmp.write(
      'src/cli.ts',
      "process.stdout.write(`src ${process.argv.slice(2).join(' ')}\\n`);\n",
    );
    const run = () =>
      runProcess(process.execPath, [tmp.path('bin', 'envsync.js'), 'plan', '-x'], { env: ENV });
    expect(await run()).toMatchObject({ code: 0, stdout: 'src plan -x\n', stderr: '' });
    await tmp.write(
      'dist/cli.js',
      "process.stdout.write(`dist ${process.argv.slice(2).join(' ')}\\n`);\n",
    );
    expect(existsSync(tmp.path('dist', 'cli.js'))).toBe(true);
    expect(await run()).toMatchObject({ code: 0, stdout: 'dist plan -x\n', stderr: '' });
  });
});

describe('a checkout on an older Node', () => {
  /** The Node the `node` dev dependency installed, as its package names it. */
  const bundled = (
    JSON.parse(readFileSync(path.join(REPO, 'node_modules', 'node', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  /**
   * A shell's PATH with `old`'s folder first and none of the node_modules/.bin folders `npm test`
   * put on it, and none of the variables npm sets for a script's children.
   */
  const shellEnv = (old: string): NodeJS.ProcessEnv => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
    PATH: [
      path.dirname(old),
      ...(process.env['PATH'] ?? '')
        .split(path.delimiter)
        .filter((dir) => !dir.split(path.sep).includes('node_modules')),
    ].join(path.delimiter),
  });

  it('the node dev dependency is Node 24, for development only: the package does not need it', () => {
    expect(PACKAGE.devDependencies?.['node']).toMatch(
      new RegExp(`^\\^${RECOMMENDED_NODE_MAJOR}\\.`),
    );
    expect(bundled).toMatch(new RegExp(`^${RECOMMENDED_NODE_MAJOR}\\.`));
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
      expect(Object.keys(PACKAGE[field] ?? {}), field).not.toContain('node');
    }
    // Its binary comes with its install script, which npm runs without a notice.
    expect(PACKAGE.allowScripts).toEqual({ node: true });
  });

  it(`npm, run by an older Node (${which}), runs the scripts with the Node 24 of node_modules/.bin`, async () => {
    const seen: unknown[] = [];
    for (const old of olds) {
      const result = await runProcess(
        'npm',
        ['exec', '--offline', '--', 'node', '-p', 'process.versions.node'],
        { env: shellEnv(old.node), cwd: REPO },
      );
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
