/**
 * The world of the sync tests: a temp folder, emulators on loopback, the CLI against them. A test
 * file calls `syncWorld()` once at its top; its hooks clean up after each test.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach } from 'vitest';
import { integrityOf } from '../../src/engine/saved-plan.ts';
import { envsync, envsyncInProcess } from './cli.ts';
import { FIXTURE_POLICIES, startTestEmulator, type TestEmulator } from './emulator.ts';
import { ACME } from './fixtures.ts';
import { tempDir } from './tmp.ts';

export const TOKEN = 'tok-3f9c1d2e8a7b6c5d';

export const BETA = `org: beta
environments:
  - name: web
    type: logical
    description: Web tier
`;

/** What `--output json` prints, as the sync tests read it. */
export type JsonReport = {
  dryRun: boolean;
  summary: Record<string, number>;
  orgs: {
    org: string;
    status: string;
    suspended?: true;
    error?: string;
    changes: {
      action: string;
      cause: string;
      name: string;
      result: string;
      error?: string;
      fields: Record<string, unknown>;
    }[];
    unchanged: string[];
    unmanaged: string[];
    errors: { file: string; line: number; column: number; path: string; message: string }[];
    warnings?: JsonReport['orgs'][number]['errors'];
    archives?: { name: string; result: string; error?: string }[];
    policyDocuments?: { name: string; result: string; error?: string }[];
    policyDocumentsUnchanged?: string[];
    policyDocumentsNotManaged?: string[];
  }[];
};

export const json = (stdout: string) => JSON.parse(stdout) as JsonReport;

/** The requests an emulator received from the `from`th on: counts, and `METHOD path` of each. */
export async function putsAndGets(api: TestEmulator, from = 0) {
  const requests = (await api.getRequests(1000)).slice(from);
  const paths = requests.map((r) => `${r.method} ${r.path}`);
  return {
    puts: requests.filter((r) => r.method === 'PUT').length,
    gets: requests.filter((r) => r.method === 'GET').length,
    paths,
    /** The requests that are not GETs. */
    writes: paths.filter((p) => !p.startsWith('GET ')),
  };
}

/**
 * Edits the saved plan in `file` and seals it again, as anyone who can write the file could;
 * `edit` says which shape it reads the plan as.
 */
export async function reseal(file: string, edit: (plan: never) => void) {
  const plan = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(plan as never);
  await writeFile(file, JSON.stringify({ ...plan, integrity: integrityOf(plan) }));
}

/** Registers the hooks and returns the helpers of one test file's world. */
export function syncWorld() {
  let tmp: Awaited<ReturnType<typeof tempDir>> | undefined;
  let emulators: TestEmulator[] = [];
  beforeEach(async () => {
    tmp = await tempDir();
  });
  afterEach(async () => {
    await Promise.all(emulators.map((e) => e.close()));
    emulators = [];
    await tmp?.cleanup();
  });
  const dir = () => {
    if (tmp === undefined) throw new Error('no test is running');
    return tmp;
  };
  const argv = (url: string, command: string[], extra: string[]) => [
    ...command,
    '--manifests',
    dir().path('manifests'),
    '--api-url',
    url,
    '--state',
    dir().path('state.json'),
    '--retry-delay',
    '10ms',
    ...extra,
  ];
  const where = (env: Record<string, string>) => ({
    env: { ENVSYNC_TOKEN: TOKEN, ...env },
    cwd: dir().dir,
  });
  return {
    tmp: dir,
    /**
     * An emulator for orgs acme and beta (unless told otherwise), closed after the test. The
     * kosli profile's has the policy documents the fixtures name in each of them (attaching
     * needs one), unless `policyDocuments` says otherwise.
     */
    emulator: async (options: Parameters<typeof startTestEmulator>[0] = {}) => {
      const orgs = options.orgs ?? ['acme', 'beta'];
      const running = await startTestEmulator({
        orgs,
        tokens: [{ token: TOKEN, orgs: null }],
        ...(options.profile === 'kosli'
          ? { policyDocuments: Object.fromEntries(orgs.map((org) => [org, FIXTURE_POLICIES])) }
          : {}),
        ...options,
      });
      emulators.push(running);
      return running;
    },
    /** Writes manifest files (by default acme's and beta's) below `manifests/`. */
    manifests: async (files: Record<string, string> = { 'acme.yaml': ACME, 'beta.yaml': BETA }) => {
      for (const [name, content] of Object.entries(files))
        await dir().write(`manifests/${name}`, content);
    },
    /** The CLI's `main`, in this process, against `url` with the world's manifests and state. */
    run: (
      url: string,
      command: string[],
      extra: string[] = [],
      env: Record<string, string> = {},
      /** The time the command sees (sync windows). */
      now?: () => number,
    ) =>
      envsyncInProcess(argv(url, command, extra), {
        ...where(env),
        ...(now === undefined ? {} : { now }),
      }),
    /** The CLI's `main` with `args` as they are, in the world's folder, with the token. */
    cli: (args: string[], env: Record<string, string> = {}) => envsyncInProcess(args, where(env)),
    /** `run`, with the CLI in a child process. */
    runProcess: (
      url: string,
      command: string[],
      extra: string[] = [],
      env: Record<string, string> = {},
    ) => envsync(argv(url, command, extra), where(env)),
  };
}
