/**
 * `npm test`: the static checks (type check, lint, format check, import circles) and the unit and integration
 * tests, side by side on every core, the checks at the lowest priority. The tests' output streams as it comes; each check's output
 * is printed when it ends. Exits 1 if anything failed. Extra arguments go to vitest.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import path from 'node:path';

interface Job {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Stream the output as it comes (the tests), or print it whole at the end (a check). */
  readonly stream: boolean;
  /** Variables added to the environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** The file system type `statfs` reports for a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/** The free space a tmpfs must have to hold the tests' folders (they use tens of MB at most). */
const TMPFS_FREE_BYTES = 1024 ** 3;

/**
 * A folder in memory for the tests' temporary folders: under /dev/shm when it is a tmpfs with room
 * to spare and TMPDIR is not set; undefined otherwise (the tests then use the system's temporary
 * folder). The tests write thousands of small files, state files that envsync fsyncs, and locks:
 * on this machine's disk (ext4 on a virtual disk) that cost 12% of the run's wall time and 10%
 * of its CPU (npm test back to back: 78.9 s and 142 s of CPU on disk, 69.6 s and 127 s in
 * memory). What is tested is the same: real files and folders, real fsync calls, real inotify
 * events.
 */
function memoryTmpdir(): string | undefined {
  if (process.platform !== 'linux' || process.env['TMPDIR'] !== undefined) return undefined;
  try {
    const info = statfsSync('/dev/shm');
    if (info.type !== TMPFS_MAGIC || info.bavail * info.bsize < TMPFS_FREE_BYTES) return undefined;
    accessSync('/dev/shm', constants.W_OK);
    return mkdtempSync(path.join('/dev/shm', 'envsync-'));
  } catch {
    return undefined;
  }
}

const testTmpdir = memoryTmpdir();
if (testTmpdir !== undefined) {
  // Stopped (Ctrl-C): the folder goes, then the signal does what it does by default.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      rmSync(testTmpdir, { recursive: true, force: true });
      process.kill(process.pid, signal);
    });
  }
}

/**
 * tsc (TypeScript 7) and oxlint's type-aware half are Go programs that build a whole TypeScript
 * program, hold it to the end and exit: collecting garbage on the way frees little. Without it
 * (up to a soft limit of 1 GiB, past which Go collects again) tsc took 0.3 to 0.9 s less CPU and
 * the lint 0.5 s less, for 30 to 50 MB more at their peak (about 480 MB each).
 */
const GO_NO_GC = { GOGC: 'off', GOMEMLIMIT: '1GiB' } as const;

/**
 * Run by npm, which puts node_modules/.bin on PATH. The checks run beside the tests on every core:
 * what counts is the CPU they take, not how soon they end, so none runs threads of its own (tsc
 * took 7.4 s of CPU on its default threads and 4.7 s on one; oxlint and its type-aware Go half
 * 8.5 s and 5.8 s). The format check is oxfmt: 0.3 s of CPU for the whole repository, where
 * prettier took 15 s on a fresh clone (2 s with its cache warm).
 */
const JOBS: readonly Job[] = [
  {
    name: 'typecheck',
    command: 'tsc',
    // Incremental: what the last run learnt is kept in node_modules/.cache (gone with the next
    // `npm ci`), and only the files changed since, and those that depend on them, are checked
    // again: 2.2 s of CPU instead of 5.2 s when little changed. The errors reported are the same
    // as a whole check's (`npm run typecheck`).
    args: [
      '--noEmit',
      '--singleThreaded',
      '--incremental',
      '--tsBuildInfoFile',
      'node_modules/.cache/envsync/typecheck.tsbuildinfo',
    ],
    stream: false,
    env: GO_NO_GC,
  },
  {
    name: 'lint',
    command: 'oxlint',
    args: [
      '--type-aware',
      '--deny-warnings',
      '--threads=1',
      'src',
      'test',
      'bench',
      'scripts',
      'bin',
    ],
    stream: false,
    env: { ...GO_NO_GC, GOMAXPROCS: '1' },
  },
  {
    name: 'format',
    command: 'oxfmt',
    args: ['--check', '--threads=1'],
    stream: false,
  },
  {
    // Import circles in src/, type-only imports included (the linter's import/no-cycle sees
    // value imports only): two files that import each other are one idea cut in two.
    name: 'circles',
    command: 'dpdm',
    args: [
      '--no-tree',
      '--no-warning',
      '--no-progress',
      '--exit-code',
      'circular:1',
      'src/**/*.ts',
    ],
    stream: false,
  },
  {
    name: 'tests',
    command: 'vitest',
    // One project of both (vitest.config.ts): one set of workers runs every file.
    args: ['run', '--project', 'unit+integration', ...process.argv.slice(2)],
    stream: true,
    env: {
      ENVSYNC_TEST_TOGETHER: '1',
      ...(testTmpdir === undefined ? {} : { TMPDIR: testTmpdir }),
    },
  },
];

function run({ name, command, args, stream, env }: Job): Promise<string | undefined> {
  return new Promise((resolve) => {
    // The checks yield the cores to the tests (lowest priority), and use the idle moments a run
    // of tests always has: together they end no later than the tests would alone.
    const [file, argv] =
      !stream && process.platform !== 'win32'
        ? ['nice', ['-n', '19', command, ...args]]
        : [command, args];
    const child = spawn(file, argv, {
      env: { ...process.env, ...env },
      stdio: stream ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', (error: Error) =>
      resolve(`${name}: cannot start ${command}: ${error.message}`),
    );
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (!stream) process.stdout.write(`\n> ${name}: ${code === 0 ? 'ok' : 'FAILED'}\n${output}`);
      resolve(code === 0 ? undefined : `${name} failed (${signal ?? `exit ${code}`})`);
    });
  });
}

const failures = (await Promise.all(JOBS.map(run))).filter((f) => f !== undefined);
// What a test left behind goes with the folder.
if (testTmpdir !== undefined) rmSync(testTmpdir, { recursive: true, force: true });
if (failures.length > 0) process.stdout.write(`\nnpm test: ${failures.join('; ')}\n`);
process.exitCode = failures.length === 0 ? 0 : 1;
