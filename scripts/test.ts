/**
 * `npm test`: the static checks (type check, lint, format check) and the unit and integration
 * tests, side by side on every core, the checks at the lowest priority. The tests' output streams as it comes; each check's output
 * is printed when it ends. Exits 1 if anything failed. Extra arguments go to vitest.
 */
import { spawn } from 'node:child_process';

interface Job {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Stream the output as it comes (the tests), or print it whole at the end (a check). */
  readonly stream: boolean;
  /** Variables added to the environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Run by npm, which puts node_modules/.bin on PATH. The checks run beside the tests on every core:
 * what counts is the CPU they take, not how soon they end, so none runs threads of its own (tsc
 * took 7.4 s of CPU on its default threads and 4.7 s on one; oxlint and its type-aware Go half
 * 8.5 s and 5.8 s). The format check is oxfmt: 0.3 s of CPU for the whole repository, where
 * prettier took 15 s on a fresh clone (2 s with its cache warm).
 */
const JOBS: readonly Job[] = [
  { name: 'typecheck', command: 'tsc', args: ['--noEmit', '--singleThreaded'], stream: false },
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
    env: { GOMAXPROCS: '1' },
  },
  {
    name: 'format',
    command: 'oxfmt',
    args: ['--check', '--threads=1'],
    stream: false,
  },
  {
    name: 'tests',
    command: 'vitest',
    // One project of both (vitest.config.ts): one set of workers runs every file.
    args: ['run', '--project', 'unit+integration', ...process.argv.slice(2)],
    stream: true,
    env: { ENVSYNC_TEST_TOGETHER: '1' },
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
if (failures.length > 0) process.stdout.write(`\nnpm test: ${failures.join('; ')}\n`);
process.exitCode = failures.length === 0 ? 0 : 1;
