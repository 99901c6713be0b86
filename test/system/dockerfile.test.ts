/**
 * The Dockerfile held to its word without a container engine (`npm run test:image` has podman):
 * its instructions parsed and checked, and its steps carried out for real on a scratch tree, after
 * which the image's ENTRYPOINT, CMD, ENV and HEALTHCHECK are run as written.
 */
import { execFileSync, spawn } from 'node:child_process';
import { access, chmod, cp, mkdir, readFile, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/cli.ts';
import { closedPort } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NODE_BIN = path.dirname(process.execPath);

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

/** Splits a Dockerfile into stages of instructions (continuations joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // Docker drops comment lines, also inside a continuation.
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    const keyword = (match?.[1] ?? '').toUpperCase();
    const args = match?.[2] ?? '';
    if (keyword === 'FROM') {
      const [image = '', as, name] = args.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`${keyword} before any FROM`);
      stage.instructions.push({ keyword, args });
    }
  }
  return stages;
}

const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const last = (stage: Stage, keyword: string) => all(stage, keyword).at(-1);
const json = (args: string | undefined) => JSON.parse(args ?? 'null') as unknown;

/** ENV's `KEY=value` pairs (double-quoted values allowed). */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of all(stage, 'ENV')) {
    for (const [, key = '', value = ''] of args.matchAll(
      /([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g,
    )) {
      env[key] = value.startsWith('"') ? (JSON.parse(value) as string) : value;
    }
  }
  return env;
}

/** A COPY's flags, sources and destination. */
function parseCopy(args: string) {
  const words = args.split(/\s+/);
  const flags = Object.fromEntries(
    words.filter((w) => w.startsWith('--')).map((w) => w.slice(2).split('=') as [string, string]),
  );
  const paths = words.filter((w) => !w.startsWith('--'));
  return { from: flags['from'], sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
}

/** HEALTHCHECK's options and its CMD in exec form. */
function parseHealthcheck(args: string) {
  const match = /^((?:--\S+\s+)*)CMD\s+(\[.*\])$/.exec(args);
  if (match === null) throw new Error(`HEALTHCHECK is not "[--options] CMD [exec form]": ${args}`);
  return { options: match[1]?.trim().split(/\s+/) ?? [], command: json(match[2]) as string[] };
}

/** Is `file` (relative to the context) sent to the build under these .dockerignore rules? */
function inContext(rules: readonly string[], file: string): boolean {
  const toRegExp = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/^\/+|\/+$/g, '')
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replaceAll('*', '[^/]*')
            .replaceAll('?', '[^/]'),
        )
        .join('.*')}$`,
    );
  const parts = file.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let included = true;
  // As Docker: the last rule matching the path or one of its parents wins.
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = toRegExp(negated ? rule.slice(1) : rule);
    if (prefixes.some((p) => pattern.test(p))) included = negated;
  }
  return included;
}

const dockerfile = await readFile(path.join(REPO, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const finalStage = stages.at(-1) as Stage;
const depsStage = stages[0] as Stage;
const buildStage = stages[1] as Stage;
const finalEnv = envOf(finalStage);

/** Runs a command of the image's steps (a thin name for the shared helper). */
const run = (
  command: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string>; timeoutMs?: number },
) => runProcess(command, args, { timeoutMs: 30_000, ...options });

describe('Dockerfile', () => {
  it('is multi-stage: a deps stage installs, a build stage compiles, the final stage copies only what envsync runs on', () => {
    expect(stages.map((s) => s.name)).toEqual(['deps', 'build', undefined]);
    // Slim (Debian, glibc), the same Node major in every stage: node_modules moves between them.
    expect(stages.map((s) => s.image)).toEqual(['node:24-slim', 'node:24-slim', 'node:24-slim']);
    const copies = all(finalStage, 'COPY').map(parseCopy);
    expect(copies).toEqual([
      { from: 'deps', sources: ['/app/node_modules'], dest: './node_modules' },
      { from: 'build', sources: ['/app/dist'], dest: './dist' },
      { from: undefined, sources: ['package.json'], dest: './' },
      { from: undefined, sources: ['bin'], dest: './bin' },
    ]);
    expect(last(finalStage, 'WORKDIR')).toBe('/app');
    expect(last(depsStage, 'WORKDIR')).toBe('/app');
  });

  it('installs production dependencies only, from the lockfile', () => {
    const runs = all(depsStage, 'RUN');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/(^|&& )npm ci --omit=dev( |$)/);
    expect(all(depsStage, 'COPY').map(parseCopy)).toEqual([
      { from: undefined, sources: ['package.json', 'package-lock.json'], dest: './' },
    ]);
    // No npm install anywhere: it could resolve versions the lockfile does not pin.
    expect(dockerfile).not.toMatch(/npm (install|i) /);
  });

  it('compiles dist/ with the build the npm package uses, its dev dependencies left in that stage', () => {
    const runs = all(buildStage, 'RUN');
    expect(runs).toEqual(['npm ci --ignore-scripts --no-audit --no-fund', 'npm run build']);
    expect(all(buildStage, 'COPY').map(parseCopy)).toEqual([
      { from: undefined, sources: ['package.json', 'package-lock.json'], dest: './' },
      { from: undefined, sources: ['tsconfig.json'], dest: './' },
      { from: undefined, sources: ['scripts/build.ts'], dest: './scripts/' },
      { from: undefined, sources: ['src'], dest: './src' },
    ]);
    // Only dist/ leaves the stage.
    const fromBuild = all(finalStage, 'COPY')
      .map(parseCopy)
      .filter((c) => c.from === 'build');
    expect(fromBuild.flatMap((c) => c.sources)).toEqual(['/app/dist']);
  });

  it('runs as a non-root user, by number', () => {
    const user = last(finalStage, 'USER') ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    // USER comes after every RUN, so nothing after it runs as root.
    const keywords = finalStage.instructions.map((i) => i.keyword);
    expect(keywords.lastIndexOf('USER')).toBeGreaterThan(keywords.lastIndexOf('RUN'));
    // The state directory is the user's: it writes the state file there.
    expect(last(finalStage, 'RUN')).toContain(`chown ${user} /var/lib/envsync`);
  });

  it('starts envsync run as PID 1 itself, with no shell or init between (envsync handles SIGTERM)', async () => {
    expect(json(last(finalStage, 'ENTRYPOINT'))).toEqual(['envsync']);
    expect(json(last(finalStage, 'CMD'))).toEqual(['run']);
    const steps = stages.flatMap((s) => s.instructions.map((i) => i.args)).join('\n');
    expect(steps).not.toMatch(/tini|dumb-init/);
    // The link's target (the package's launcher) execs node through its shebang; `env` replaces
    // itself with node.
    const launcher = await readFile(path.join(REPO, 'bin', 'envsync.js'), 'utf8');
    // `env -S node <flags>` execs node with its flags: node, not env, ends up as PID 1.
    expect(launcher.split('\n')[0]).toMatch(/^#!\/usr\/bin\/env (-S )?node( --[a-z-]+=\S+)*$/);
    expect(last(finalStage, 'RUN')).toContain('ln -s /app/bin/envsync.js /usr/local/bin/envsync');
  });

  it('sets manifests at /manifests, state under /var/lib/envsync, and listens on 0.0.0.0:9464', () => {
    expect(finalEnv).toMatchObject({
      ENVSYNC_MANIFESTS: '/manifests',
      ENVSYNC_STATE: '/var/lib/envsync/state.json',
      ENVSYNC_LISTEN: '0.0.0.0:9464',
      NODE_ENV: 'production',
    });
    expect(all(finalStage, 'EXPOSE')).toEqual(['9464']);
  });

  it('has a HEALTHCHECK on /healthz that needs only node (slim has no curl or wget)', () => {
    const { options, command } = parseHealthcheck(last(finalStage, 'HEALTHCHECK') ?? '');
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    expect(command[2]).toContain('/healthz');
    expect(options).toEqual(expect.arrayContaining([expect.stringMatching(/^--timeout=\d+s$/)]));
  });

  it('.dockerignore lets in what the COPY lines name and keeps out the rest', async () => {
    const rules = (await readFile(path.join(REPO, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const sources = stages
      .flatMap((s) => all(s, 'COPY').map(parseCopy))
      .filter((c) => c.from === undefined)
      .flatMap((c) => c.sources);
    for (const file of [...sources, 'src/cli.ts', 'src/daemon/http.ts', 'bin/envsync.js'])
      expect(inContext(rules, file), file).toBe(true);
    for (const file of [
      'node_modules/yaml/package.json',
      '.git/config',
      '.envsync/state.json',
      'test/system/dockerfile.test.ts',
      'scripts/test.ts',
      'dist/cli.js',
      'token',
    ])
      expect(inContext(rules, file), file).toBe(false);
  });
});

describe("the image's steps, run for real", () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  /** A stage's filesystem: container path -> path under the scratch tree. */
  const rootfs = (stage: string) => (containerPath: string) =>
    path.join(tmp.dir, stage, path.posix.resolve('/', containerPath));
  let final: (containerPath: string) => string;
  let appDir: string;
  let env: Record<string, string>;

  /** Carries out one stage's WORKDIR, COPY and RUN steps on its scratch tree. */
  async function build(stage: Stage, label: string) {
    const inStage = rootfs(label);
    let workdir = '/';
    for (const { keyword, args } of stage.instructions) {
      if (keyword === 'WORKDIR') {
        workdir = path.posix.resolve(workdir, args);
        await mkdir(inStage(workdir), { recursive: true });
      } else if (keyword === 'COPY') {
        const { from, sources, dest } = parseCopy(args);
        const target = inStage(path.posix.resolve(workdir, dest));
        for (const source of sources) {
          const origin = from === undefined ? path.join(REPO, source) : rootfs(from)(source);
          const into = dest.endsWith('/') ? path.join(target, path.basename(source)) : target;
          await cp(origin, into, { recursive: true });
        }
      } else if (keyword === 'RUN' && label !== 'final') {
        // Verbatim, as the image's shell would run it.
        const result = await run('sh', ['-c', args], {
          cwd: inStage(workdir),
          env: { ...networkEnv(), PATH: `${NODE_BIN}:/usr/bin:/bin` },
          timeoutMs: 300_000,
        });
        expect(result.code, `RUN ${args}\n${result.stderr}`).toBe(0);
      } else if (keyword === 'RUN') {
        await runFileSteps(args, inStage);
      }
    }
  }

  /** The final stage's RUN: file steps only, each done here as the image would do it. */
  async function runFileSteps(args: string, inStage: (p: string) => string) {
    for (const step of args.split('&&').map((s) => s.trim().split(/\s+/))) {
      const [command, ...rest] = step;
      if (command === 'ln' && rest[0] === '-s' && rest.length === 3) {
        await mkdir(path.dirname(inStage(rest[2] ?? '')), { recursive: true });
        await symlink(inStage(rest[1] ?? ''), inStage(rest[2] ?? ''));
      } else if (command === 'chmod' && rest.length === 2) {
        await chmod(inStage(rest[1] ?? ''), Number.parseInt(rest[0] ?? '', 8));
      } else if (command === 'mkdir' && rest[0] === '-p') {
        for (const dir of rest.slice(1)) await mkdir(inStage(dir), { recursive: true });
      } else if (command === 'chown' && rest.length === 2) {
        // Ownership needs root here; the test above checks that it names the USER.
        await access(inStage(rest[1] ?? ''));
      } else {
        throw new Error(`a final-stage step this test does not know: "${step.join(' ')}"`);
      }
    }
  }

  beforeAll(async () => {
    tmp = await tempDir('envsync-image-');
    await build(depsStage, depsStage.name ?? 'deps');
    await build(buildStage, buildStage.name ?? 'build');
    await build(finalStage, 'final');
    final = rootfs('final');
    appDir = final(last(finalStage, 'WORKDIR') ?? '/');
    // The image's ENV with its paths inside the scratch tree; the port as `docker run -e` would
    // set it, since 9464 may be taken on this machine.
    env = Object.fromEntries(
      Object.entries(finalEnv).map(([k, v]) => [k, v.startsWith('/') ? final(v) : v]),
    );
    env['ENVSYNC_LISTEN'] = `127.0.0.1:${await closedPort()}`;
    env['PATH'] = `${final('/usr/local/bin')}:${NODE_BIN}:/usr/bin:/bin`;
    // The manifests volume.
    await cp(path.join(REPO, 'examples', 'manifests'), final(finalEnv['ENVSYNC_MANIFESTS'] ?? ''), {
      recursive: true,
    });
  }, 600_000);
  afterAll(async () => {
    await tmp?.cleanup();
  });

  it('the production-only install is all envsync needs to run', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const installed = await readdir(path.join(appDir, 'node_modules'));
    for (const name of Object.keys(pkg.dependencies)) expect(installed).toContain(name);
    for (const name of Object.keys(pkg.devDependencies))
      expect(installed).not.toContain(name.split('/')[0]);

    expect(await readdir(appDir)).toEqual(
      expect.arrayContaining(['bin', 'dist', 'node_modules', 'package.json']),
    );
    expect(await readdir(appDir)).not.toContain('src');
    const cli = path.join(appDir, 'bin', 'envsync.js');
    const version = await run(process.execPath, [cli, '--version'], { cwd: appDir, env });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const validate = await run(
      process.execPath,
      [cli, 'validate', '--manifests', path.join(REPO, 'examples', 'manifests')],
      { cwd: appDir, env },
    );
    expect(validate.code, validate.stderr).toBe(0);
  });

  it('the entrypoint runs the daemon, the HEALTHCHECK passes, and SIGTERM stops it with exit 0', async () => {
    const [entrypoint = '', ...entryArgs] = json(last(finalStage, 'ENTRYPOINT')) as string[];
    const cmd = json(last(finalStage, 'CMD')) as string[];
    const [healthBin = '', ...healthArgs] = parseHealthcheck(
      last(finalStage, 'HEALTHCHECK') ?? '',
    ).command;
    const healthcheck = () => run(healthBin, healthArgs, { cwd: appDir, env, timeoutMs: 10_000 });
    // Nothing listens yet: the check must be able to fail.
    expect((await healthcheck()).code).not.toBe(0);

    // As the runtime does: ENTRYPOINT looked up on PATH, then CMD, plus the emulator so the
    // daemon has an API to reconcile against.
    const bin = execFileSync('sh', ['-c', `command -v ${entrypoint}`], {
      env: { PATH: env['PATH'] ?? '' },
      encoding: 'utf8',
    }).trim();
    const child = spawn(bin, [...entryArgs, ...cmd, '--emulator'], {
      cwd: appDir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const healthy = async () => child.exitCode !== null || (await healthcheck()).code === 0;
      await waitFor('a passing healthcheck', healthy, { timeoutMs: 15_000, everyMs: 200 });
      expect((await healthcheck()).code, stderr).toBe(0);

      child.kill('SIGTERM');
      expect(await exited, stderr).toBe(0);
      expect(stderr).toContain('"msg":"stopped"');
      const state = JSON.parse(await readFile(env['ENVSYNC_STATE'] ?? '', 'utf8')) as object;
      expect(state).toHaveProperty('orgs');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

/** What npm needs from this machine to reach the registry (as a build host would pass on). */
function networkEnv(): Record<string, string> {
  const wanted =
    /^(HOME|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(https?|no|all)_proxy|npm_config_.+)$/i;
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => wanted.test(entry[0]) && entry[1] !== undefined,
    ),
  );
}
