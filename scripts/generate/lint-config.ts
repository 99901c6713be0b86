/**
 * `.oxlintrc.json`, from the rules declared once here. oxlint's overrides replace a rule's options
 * for the files they match (they do not add to them), so every folder's override must repeat the
 * import rules that hold everywhere; written by hand, the same message stood in eight places.
 *
 * Three kinds of rule, each explained in docs/architecture.md:
 * - the layers: which folder of src/ may import which (the arrows point inward);
 * - the start-up rules: modules that src/ reaches only through a helper that loads them when
 *   needed, or through one module that loads less of them;
 * - time: folders whose code reads the time or sets timers only through the Clock passed in;
 * - reads: files are read only through src/runtime/read-file.ts.
 */

type Json = Record<string, unknown>;

const LAYERS_WHY =
  'Layers point inward: commands -> daemon -> engine -> api, manifests -> core; config and runtime serve them all (docs/architecture.md).';

/** A module that src/ does not import directly, and why; `allowedIn`: the folders that may. */
interface StartUpRule {
  readonly name: string;
  readonly message: string;
  readonly allowedIn?: readonly string[];
}

const START_UP_RULES: readonly StartUpRule[] = [
  {
    name: 'node:fs',
    message:
      'Use fs() from src/runtime/builtins.ts: an ES import of node:fs loads node:fs/promises and readline at every start.',
  },
  {
    name: 'node:fs/promises',
    message:
      'Use fsPromises() from src/runtime/builtins.ts, so that it loads only on a path that uses it.',
  },
  {
    name: 'node:http',
    message:
      "Use http() from src/runtime/builtins.ts: an ES import of node:http loads Node's fetch stack.",
  },
  {
    name: 'node:util',
    message:
      'Use util() from src/runtime/builtins.ts: an ES import of node:util loads node:worker_threads.',
  },
  {
    name: 'node:tls',
    message:
      'Use tls() from src/runtime/builtins.ts, so that it loads only for a client given --ca-file.',
  },
  {
    name: 'node:crypto',
    message:
      'Use crypto() from src/runtime/builtins.ts, so that it loads only on a path that uses it (not validate).',
    // The daemon and the emulator hash at every start anyway.
    allowedIn: ['daemon', 'emulator'],
  },
  {
    name: 'undici',
    message:
      "Import Pool and Agent from src/api/undici.ts: undici's entry point loads fetch, WebSocket, caches and mocks (130 ms of CPU and 17.5 MB of a small plan).",
  },
  {
    name: 'pino',
    message:
      'Make loggers with createLogger() from src/runtime/log.ts: it loads pino with the first line written, so a quiet run never loads it (15 ms of validate, 9 MB of a small plan).',
  },
  {
    name: 'prom-client',
    message:
      "Require prom-client's parts by path, as src/daemon/metrics.ts does: its entry point also loads the push gateway, cluster aggregation and summaries (3 MB of the settled daemon).",
  },
  {
    name: 'node:v8',
    message:
      'V8\'s flags are set in one place, tuneV8ForWork() in src/runtime/v8-flags.ts (docs/architecture.md, "Start-up rules").',
    allowedIn: ['runtime'],
  },
];

const CLOCK = 'Time comes only from the Clock passed in, so that tests can drive it: use the Clock';

/** Folders whose code reads the time and sets timers only through a Clock. */
const CLOCK_FOLDERS = ['api', 'daemon'];

const CLOCK_IMPORTS: readonly StartUpRule[] = [
  {
    name: 'node:timers',
    message: `${CLOCK} (src/core/clock.ts), clock.setTimer(ms, callback, { unref }).`,
  },
  {
    name: 'node:timers/promises',
    message: `${CLOCK} (src/core/clock.ts), clock.sleep(ms, signal).`,
  },
  { name: 'node:perf_hooks', message: `${CLOCK} (src/core/clock.ts), clock.now().` },
];

/** Each folder of src/, the folders it may not import, and what it is. */
const LAYERS: readonly { folder: string; never: readonly string[]; what: string }[] = [
  {
    folder: 'runtime',
    never: ['api', 'manifests', 'engine', 'daemon', 'commands', 'config', 'emulator'],
    what: 'src/runtime/ is the bottom layer beside core/: it imports only core/ and itself.',
  },
  {
    folder: 'config',
    never: ['api', 'manifests', 'engine', 'daemon', 'commands'],
    what: "src/config/ reads settings; it imports only core/, runtime/ and the emulator's options.",
  },
  {
    folder: 'api',
    never: ['manifests', 'engine', 'daemon', 'commands', 'emulator'],
    what: 'src/api/ is the API client: it imports only core/, config/ and runtime/.',
  },
  {
    folder: 'manifests',
    never: ['api', 'engine', 'daemon', 'commands', 'emulator'],
    what: 'src/manifests/ reads manifests: it imports only core/, config/ and runtime/.',
  },
  {
    folder: 'engine',
    never: ['daemon', 'commands', 'emulator'],
    what: 'src/engine/ runs one pass: it imports api/, manifests/, core/, config/ and runtime/, never the daemon or a command.',
  },
  {
    folder: 'daemon',
    never: ['commands', 'emulator'],
    what: 'src/daemon/ imports the engine and below, never a command or the emulator.',
  },
];

const BASE: Json = {
  $schema: './node_modules/oxlint/configuration_schema.json',
  plugins: ['typescript', 'unicorn', 'oxc', 'import', 'node', 'vitest'],
  categories: { correctness: 'error', suspicious: 'warn' },
  rules: {
    'typescript/no-floating-promises': 'error',
    'typescript/no-misused-promises': 'error',
    'typescript/await-thenable': 'error',
    'typescript/no-explicit-any': 'error',
    'typescript/consistent-type-imports': 'error',
    'vitest/no-focused-tests': 'error',
    'vitest/no-disabled-tests': 'error',
    eqeqeq: 'error',
    // Code is never built at run time: generated code is checked in (npm run generate).
    'no-eval': 'error',
    'no-new-func': 'error',
    'no-implied-eval': 'error',
    'typescript/no-implied-eval': 'error',
    'no-console': 'off',
    'import/no-cycle': 'error',
    'typescript/no-unsafe-type-assertion': 'off',
    'import/no-named-as-default-member': 'off',
    'unicorn/no-array-sort': 'off',
    'unicorn/consistent-function-scoping': 'off',
    'vitest/valid-expect': ['error', { maxArgs: 2 }],
    'vitest/expect-expect': [
      'error',
      { assertFunctionNames: ['expect', 'expectNoToken', 'expect*'] },
    ],
  },
  ignorePatterns: ['node_modules', 'bench/out'],
};

/** The import paths a folder may not use (undefined: src/'s root and anything not listed). */
function restrictedPaths(folder: string | undefined): Json[] {
  const rules = [
    ...START_UP_RULES.filter((rule) => folder === undefined || !rule.allowedIn?.includes(folder)),
    ...(folder !== undefined && CLOCK_FOLDERS.includes(folder) ? CLOCK_IMPORTS : []),
  ];
  return rules.map(({ name, message }) => ({ name, allowTypeImports: true, message }));
}

function importRule(paths: Json[], patterns: Json[]): Json {
  return {
    'no-restricted-imports': [
      'error',
      { ...(paths.length > 0 ? { paths } : {}), ...(patterns.length > 0 ? { patterns } : {}) },
    ],
  };
}

/**
 * Calls that open or read a file, which only src/runtime/read-file.ts makes: it reads a regular
 * file only (never a FIFO, a socket, a device), within a size limit and the command's deadline.
 * (`open` is not listed: too many other objects have one. fs() and fsPromises() have none.)
 */
const READ_CALLS = ['readFile', 'readFileSync', 'createReadStream', 'openSync', 'readSync'];
const READ_FILE = 'src/runtime/read-file.ts';

const readRules: Json[] = READ_CALLS.map((property) => ({
  property,
  message: `Read files with readRegularText / readRegularFile / readRegularFileSync from ${READ_FILE}: a regular file only (a FIFO, a socket or a device is refused), within a size limit and the command's deadline.`,
}));

const clockRules: Json = {
  'no-restricted-globals': [
    'error',
    {
      checkGlobalObject: true,
      globals: [
        {
          name: 'setTimeout',
          message: `${CLOCK} (src/core/clock.ts), clock.setTimer(ms, callback, { unref }) or clock.sleep(ms, signal).`,
        },
        {
          name: 'setInterval',
          message: `${CLOCK} (src/core/clock.ts), a clock.setTimer set again each time it fires.`,
        },
        {
          name: 'setImmediate',
          message: `${CLOCK} (src/core/clock.ts), clock.setTimer(0, callback).`,
        },
        { name: 'performance', message: `${CLOCK} (src/core/clock.ts), clock.now().` },
      ],
    },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: `${CLOCK} (src/core/clock.ts), clock.now().` },
    ...readRules,
  ],
};

/** The whole configuration, as `.oxlintrc.json` holds it. */
export function lintConfig(): Json {
  const overrides: Json[] = [
    {
      files: ['src/**'],
      rules: {
        ...importRule(restrictedPaths(undefined), []),
        'no-restricted-properties': ['error', ...readRules],
      },
    },
    ...LAYERS.map(({ folder, never, what }) => ({
      files: [`src/${folder}/**`],
      rules: {
        ...importRule(restrictedPaths(folder), [
          { regex: `^\\.\\./(${never.join('|')})/`, message: `${what} ${LAYERS_WHY}` },
        ]),
        ...(CLOCK_FOLDERS.includes(folder) ? clockRules : {}),
      },
    })),
    {
      files: ['src/core/**'],
      rules: importRule(
        [],
        [
          {
            regex: '^[^.]',
            message: 'src/core/ is pure: no node: modules and no packages (pass side effects in).',
          },
          { regex: '^\\.\\./', message: 'src/core/ imports only other modules of src/core/.' },
        ],
      ),
    },
    {
      files: ['src/emulator/**'],
      rules: importRule(restrictedPaths('emulator'), [
        {
          regex: '^\\.\\./(api|core|engine|manifests|daemon|commands|config)/',
          message:
            'The emulator is an independent implementation of the API: it imports nothing from the client side (only src/runtime/).',
        },
      ]),
    },
    // The one module that reads files (and the last override, so that nothing sets the rule again).
    { files: [READ_FILE], rules: { 'no-restricted-properties': 'off' } },
  ];
  return { ...BASE, overrides };
}
