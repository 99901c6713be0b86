/**
 * `.oxlintrc.json`, from the rules declared once here. oxlint's overrides replace a rule's options
 * for the files they match (they do not add to them), so every folder's override must repeat the
 * import rules that hold everywhere; written by hand, the same message stood in many places.
 *
 * The kinds of rule, each explained in docs/architecture.md:
 * - the layers: which folder of src/ may import which (the arrows point inward);
 * - purity: src/core/ and the pure files of other folders import no node: module and no package;
 * - time: folders whose code reads the time or sets timers only through the Clock passed in;
 * - reads: files are read only through src/runtime/read-file.ts;
 * - V8's flags are set in one place (src/runtime/v8-flags.ts).
 */

type Json = Record<string, unknown>;

const LAYERS_WHY =
  'Layers point inward: commands -> daemon -> notify, engine -> state, api, manifests -> core; config and runtime serve them all (docs/architecture.md).';

/** A module that src/ does not import directly, and why; `allowedIn`: the folders that may. */
interface ImportRule {
  readonly name: string;
  readonly message: string;
  readonly allowedIn?: readonly string[];
}

const ONE_PLACE_RULES: readonly ImportRule[] = [
  {
    name: 'node:v8',
    message: "V8's flags are set in one place, tuneV8ForWork() in src/runtime/v8-flags.ts.",
    allowedIn: ['runtime'],
  },
];

/**
 * Pure files outside src/core/: the daemon's and the notifications' decisions (and the status
 * page's rendering), each beside the shell that carries it out. Like src/core/, they import no
 * node: module and no package (side effects come in as arguments), only type imports of them.
 */
const PURE_FILES = [
  'src/daemon/page.ts',
  'src/daemon/page-assets.ts',
  'src/daemon/pass.ts',
  'src/daemon/status.ts',
  'src/notify/events.ts',
  'src/notify/format.ts',
];

const CLOCK = 'Time comes only from the Clock passed in, so that tests can drive it: use the Clock';

/** Folders whose code reads the time and sets timers only through a Clock. */
const CLOCK_FOLDERS = ['api', 'daemon', 'notify'];

const CLOCK_IMPORTS: readonly ImportRule[] = [
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
    never: [
      'api',
      'manifests',
      'state',
      'engine',
      'notify',
      'daemon',
      'commands',
      'config',
      'emulator',
    ],
    what: 'src/runtime/ is the bottom layer beside core/: it imports only core/ and itself.',
  },
  {
    folder: 'config',
    never: ['api', 'manifests', 'state', 'engine', 'daemon', 'commands'],
    what: "src/config/ reads settings; it imports only core/, runtime/, the notifications' formats and the emulator's options.",
  },
  {
    folder: 'api',
    never: ['manifests', 'state', 'engine', 'notify', 'daemon', 'commands', 'emulator'],
    what: 'src/api/ is the API client: it imports only core/, config/ and runtime/.',
  },
  {
    folder: 'manifests',
    never: ['api', 'state', 'engine', 'notify', 'daemon', 'commands', 'emulator'],
    what: 'src/manifests/ reads manifests: it imports only core/, config/ and runtime/.',
  },
  {
    folder: 'state',
    never: ['api', 'manifests', 'engine', 'notify', 'daemon', 'commands', 'emulator'],
    what: 'src/state/ is the state file: it imports only core/, config/ and runtime/.',
  },
  {
    folder: 'engine',
    never: ['notify', 'daemon', 'commands', 'emulator'],
    what: 'src/engine/ runs one pass: it imports api/, manifests/, state/, core/, config/ and runtime/, never the daemon or a command.',
  },
  {
    folder: 'notify',
    never: ['daemon', 'commands', 'emulator'],
    what: 'src/notify/ decides and delivers notifications: it imports the engine and below, never the daemon or a command.',
  },
  {
    folder: 'daemon',
    never: ['commands', 'emulator'],
    what: 'src/daemon/ imports the engine, notify/ and below, never a command or the emulator.',
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
    ...ONE_PLACE_RULES.filter((rule) => folder === undefined || !rule.allowedIn?.includes(folder)),
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

/** The imports a layer may not make. */
function layerPattern({ never, what }: (typeof LAYERS)[number]): Json {
  return { regex: `^\\.\\./(${never.join('|')})/`, message: `${what} ${LAYERS_WHY}` };
}

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
    ...LAYERS.map((layer) => ({
      files: [`src/${layer.folder}/**`],
      rules: {
        ...importRule(restrictedPaths(layer.folder), [layerPattern(layer)]),
        ...(CLOCK_FOLDERS.includes(layer.folder) ? clockRules : {}),
      },
    })),
    ...PURE_FILES.map((file) => {
      const layer = LAYERS.find(({ folder }) => file.startsWith(`src/${folder}/`));
      return {
        files: [file],
        rules: importRule(restrictedPaths(layer?.folder), [
          ...(layer === undefined ? [] : [layerPattern(layer)]),
          {
            regex: '^[^.]',
            allowTypeImports: true,
            message: `${file} is pure: no node: modules and no packages (pass side effects in).`,
          },
        ]),
      };
    }),
    {
      files: ['src/core/**'],
      rules: importRule(
        [],
        [
          {
            regex: '^[^.]',
            allowTypeImports: true,
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
          regex: '^\\.\\./(api|core|engine|manifests|state|notify|daemon|commands|config)/',
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
