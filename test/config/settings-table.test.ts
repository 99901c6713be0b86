/** The settings table: its shape, precedence, parsers, generated parsers, schema, help and docs. */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { commandHelp } from '../../src/commands/help.ts';
import { flagsDoc } from '../../src/commands/flags-doc.ts';
import { COMMAND_NAMES, type CommandName } from '../../src/config/commands.ts';
import { configFileSchema } from '../../src/config/config-file.ts';
import { EMULATOR_SETTINGS } from '../../src/config/emulator-settings.ts';
import { allSettings, flagOptions, unknownFlagMessage } from '../../src/config/flags.ts';
import { resolveSetting, resolveValues } from '../../src/config/resolve.ts';
import { SETTINGS } from '../../src/config/settings-table.ts';
import { accepts, type Raw, type Setting, type SettingsTable } from '../../src/config/setting.ts';
import { ConfigError, UsageError } from '../../src/runtime/errors.ts';

const ALL: SettingsTable = { ...SETTINGS, ...EMULATOR_SETTINGS };
const settings = Object.entries(ALL);

/** Every flag each command took before the table (the product's contract), sorted. */
const SHARED = [
  'api-dialect',
  'api-url',
  'ca-file',
  'concurrency',
  'config',
  'deadline',
  'detailed-exitcode',
  'exclude',
  'insecure-http',
  'log-format',
  'log-level',
  'manifests',
  'max-archive',
  'max-file-bytes',
  'max-response-bytes',
  'max-retry-after',
  'org',
  'output',
  'retries',
  'retry-delay',
  'state',
  'state-lock-timeout',
  'strict',
  'sync-window',
  'timeout',
  'token-dir',
  'token-file',
];
const CI = ['annotations', 'summary-file'];
const DAEMON = [
  'debounce',
  'observe',
  'emulator',
  'interval',
  'listen',
  'notify-format',
  'notify-secret-file',
  'notify-url',
  'public-url',
  'shard-count',
  'shard-from-hostname',
  'settle',
  'shard-index',
  'shutdown-timeout',
  'webhook-min-interval',
  'webhook-secret-file',
];
const EXPECTED_FLAGS: Record<CommandName, string[]> = {
  validate: [...SHARED, ...CI, 'help'],
  plan: [...SHARED, ...CI, 'out', 'help'],
  sync: [...SHARED, ...CI, 'out', 'dry-run', 'plan', 'ignore-windows', 'observe', 'help'],
  run: [...SHARED.filter((f) => f !== 'output' && f !== 'detailed-exitcode'), ...DAEMON, 'help'],
  export: [
    'api-dialect',
    'api-url',
    'ca-file',
    'concurrency',
    'config',
    'deadline',
    'force',
    'help',
    'insecure-http',
    'log-format',
    'log-level',
    'max-response-bytes',
    'max-retry-after',
    'org',
    'out',
    'retries',
    'retry-delay',
    'timeout',
    'token-dir',
    'token-file',
  ],
  schema: ['help'],
  emulator: [
    'data',
    'fail-rate',
    'fault-placeholder',
    'hang-rate',
    'headers-timeout',
    'help',
    'host',
    'latency',
    'log-format',
    'log-level',
    'org',
    'port',
    'profile',
    'rate-limit',
    'request-timeout',
    'reset-rate',
    'seed',
    'token',
  ],
};
const EXPECTED_SHORT: Record<CommandName, Record<string, string>> = {
  validate: { o: 'output', c: 'config', h: 'help' },
  plan: { o: 'output', c: 'config', h: 'help' },
  sync: { o: 'output', c: 'config', h: 'help' },
  run: { c: 'config', h: 'help' },
  export: { c: 'config', h: 'help' },
  schema: { h: 'help' },
  emulator: { h: 'help' },
};

describe('the table', () => {
  it('declares each setting for known commands, with a help line, and a value name exactly for flags with a value', () => {
    for (const [id, s] of settings) {
      expect(s.commands.length, id).toBeGreaterThan(0);
      for (const c of [...s.commands, ...(s.tolerated ?? [])])
        expect(COMMAND_NAMES, id).toContain(c);
      expect(s.flag, id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(s.help, id).not.toBe('');
      expect(s.value === undefined, id).toBe(s.type === 'boolean');
    }
  });

  it('keeps the emulator ids apart from the others (one table, two modules)', async () => {
    const shared = Object.keys(EMULATOR_SETTINGS).filter((id) => Object.hasOwn(SETTINGS, id));
    expect(shared).toEqual([]);
    expect(Object.keys(await allSettings())).toEqual(Object.keys(ALL));
  });

  it.each(COMMAND_NAMES)('%s: no two of its settings share a flag or a short flag', (command) => {
    const own = settings.map(([, s]) => s).filter((s) => accepts(s, command));
    const flags = own.map((s) => s.flag);
    const shorts = own.flatMap((s) => (s.short === undefined ? [] : [s.short]));
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(shorts).size).toBe(shorts.length);
  });

  it.each(COMMAND_NAMES)('%s: takes exactly the flags it always took', (command) => {
    const options = flagOptions(ALL, command);
    expect(Object.keys(options).sort()).toEqual([...EXPECTED_FLAGS[command]].sort());
    const shorts = Object.fromEntries(
      Object.entries(options).flatMap(([flag, o]) =>
        o.short === undefined ? [] : [[o.short, flag]],
      ),
    );
    expect(shorts).toEqual(EXPECTED_SHORT[command]);
  });

  it('gives util.parseArgs repeatable flags as lists and switches as booleans', () => {
    const { values } = parseArgs({
      args: ['--org', 'a', '--org', 'b', '--insecure-http', '-o', 'json'],
      options: flagOptions(ALL, 'plan'),
      strict: true,
    });
    expect(values).toEqual({ org: ['a', 'b'], 'insecure-http': true, output: 'json' });
  });

  it('names every environment variable once', () => {
    const names = settings.flatMap(([, s]) => (s.env === undefined ? [] : [s.env.name]));
    expect(new Set(names).size).toBe(names.length);
  });
});

/** Three distinct valid raw values of a setting, as a flag, a variable and the config file give them. */
function samples(s: Setting): [flag: Raw, env: string, file: Raw] | undefined {
  const type = s.file?.type;
  if (type === undefined || s.type === 'boolean') return undefined;
  switch (type.kind) {
    case 'string':
      if (s.flag === 'public-url')
        return ['https://flag.example', 'https://env.example', 'https://file.example'];
      return s.flag === 'listen'
        ? ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3']
        : ['from-flag', 'from-env', 'from-file'];
    case 'duration':
      return ['1s', '2s', '3s'];
    case 'integer':
      return [String(type.min + 1), String(type.min + 2), type.min + 3];
    case 'enum':
      return [type.values[0], type.values[1] ?? '', type.values[2 % type.values.length] ?? ''];
    default:
      return undefined;
  }
}

describe('precedence: flags > environment > config file > defaults', () => {
  const valued = settings.filter(([, s]) => samples(s) !== undefined && s.env?.read === undefined);

  it.each(valued)('%s', (_id, s) => {
    const [flag, env, file] = samples(s) ?? ['', '', ''];
    const sources = (f: boolean, e: boolean, c: boolean) => ({
      flags: f ? { [s.flag]: flag } : {},
      env: e && s.env !== undefined ? { [s.env.name]: env } : {},
      file: c && s.file !== undefined ? { [s.file.key]: file } : {},
      fileDir: '/config',
    });
    const fromFile = s.file?.relative === true ? `/config/${String(file)}` : file;
    expect(resolveSetting(s, sources(true, true, true))).toEqual(s.parse(flag, s.flag));
    expect(resolveSetting(s, sources(false, true, true))).toEqual(s.parse(env, s.flag));
    expect(resolveSetting(s, sources(false, true, false))).toEqual(s.parse(env, s.flag));
    expect(resolveSetting(s, sources(false, false, true))).toEqual(s.parse(fromFile, s.flag));
    expect(resolveSetting(s, sources(false, false, false))).toEqual(
      s.default === undefined ? undefined : s.parse(s.default, s.flag),
    );
    // An empty variable counts as unset.
    expect(
      resolveSetting(s, { ...sources(false, false, true), env: { [s.env?.name ?? '']: '' } }),
    ).toEqual(s.parse(fromFile, s.flag));
  });

  it('switches: a flag beats a variable, a variable beats the file', () => {
    const s = SETTINGS.insecureHttp;
    expect(
      resolveSetting(s, {
        flags: { 'insecure-http': true },
        env: { ENVSYNC_INSECURE_HTTP: 'false' },
      }),
    ).toBe(true);
    expect(
      resolveSetting(s, {
        flags: {},
        env: { ENVSYNC_INSECURE_HTTP: 'false' },
        file: { insecureHttp: true },
      }),
    ).toBe(false);
    // Only true and false: any other word is an error naming the flag, never silently off.
    for (const word of ['no', '0', 'TRUE', 'yes']) {
      expect(() => resolveSetting(s, { flags: {}, env: { ENVSYNC_INSECURE_HTTP: word } })).toThrow(
        `--insecure-http: "${word}" must be true or false`,
      );
    }
    expect(
      resolveSetting(SETTINGS.shardFromHostname, {
        flags: {},
        env: { ENVSYNC_SHARD_FROM_HOSTNAME: 'false' },
        file: { shardFromHostname: true },
      }),
    ).toBe(false);
    expect(resolveSetting(s, { flags: {}, env: {}, file: { insecureHttp: true } })).toBe(true);
    expect(resolveSetting(s, { flags: {}, env: {} })).toBe(false);
  });

  it('paths from the config file are relative to it; from a flag or a variable they are kept as given', () => {
    for (const id of ['manifests', 'state', 'tokenFile', 'caFile'] as const) {
      const s = SETTINGS[id];
      expect(
        resolveSetting(s, {
          flags: {},
          env: {},
          file: { [s.file.key]: 'x/y' },
          fileDir: '/etc/envsync',
        }),
      ).toBe('/etc/envsync/x/y');
      expect(
        resolveSetting(s, { flags: { [s.flag]: 'x/y' }, env: {}, fileDir: '/etc/envsync' }),
      ).toBe('x/y');
      expect(
        resolveSetting(s, { flags: {}, env: { [s.env.name]: 'x/y' }, fileDir: '/etc/envsync' }),
      ).toBe('x/y');
    }
    expect(
      resolveSetting(SETTINGS.apiUrl, {
        flags: {},
        env: {},
        file: { apiUrl: 'https://a' },
        fileDir: '/d',
      }),
    ).toBe('https://a');
  });

  it('reads the variables that have a form of their own', () => {
    const orgs = (ENVSYNC_ORGS: string) =>
      resolveSetting(SETTINGS.orgs, { flags: {}, env: { ENVSYNC_ORGS } });
    expect(orgs('a, b,,c ')).toEqual(['a', 'b', 'c']);
    const exclude = (ENVSYNC_EXCLUDE: string, file?: string[]) =>
      resolveSetting(SETTINGS.exclude, {
        flags: {},
        env: { ENVSYNC_EXCLUDE },
        file: file === undefined ? {} : { exclude: file },
      });
    expect(exclude('k8s/, *.ci.yaml,,')).toEqual(['k8s/', '*.ci.yaml']);
    // The variable replaces the config file's list; it does not add to it.
    expect(exclude('k8s/', ['ci/'])).toEqual(['k8s/']);
    // Patterns are matched below the manifests root: not made relative to the config file.
    expect(
      resolveSetting(SETTINGS.exclude, {
        flags: {},
        env: {},
        file: { exclude: ['k8s/'] },
        fileDir: '/etc/envsync',
      }),
    ).toEqual(['k8s/']);
    // Set but empty of names: no org at all, which is not the same as every org.
    expect(orgs(',')).toEqual([]);
    const shard = (value: string, file?: boolean) =>
      resolveSetting(SETTINGS.shardFromHostname, {
        flags: {},
        env: { ENVSYNC_SHARD_FROM_HOSTNAME: value },
        file: file === undefined ? {} : { shardFromHostname: file },
      });
    // A switch like any other: true or false, and a variable beats the config file.
    expect(shard('true')).toBe(true);
    expect(shard('false', true)).toBe(false);
    expect(() => shard('yes')).toThrow('--shard-from-hostname: "yes" must be true or false');
    const annotations = (env: NodeJS.ProcessEnv, flag?: string) =>
      resolveSetting(SETTINGS.annotations, {
        flags: flag === undefined ? {} : { annotations: flag },
        env,
      });
    expect(annotations({ GITHUB_ACTIONS: 'true' })).toBe('github');
    expect(annotations({ GITHUB_ACTIONS: 'false' })).toBe('none');
    expect(annotations({ GITHUB_ACTIONS: 'true' }, 'none')).toBe('none');
    expect(annotations({})).toBe('none');
  });

  it('resolves a whole table in its order, so the first bad value is the one reported', () => {
    expect(() =>
      resolveValues(SETTINGS, { flags: { concurrency: '0', retries: '99' }, env: {} }),
    ).toThrow(/^--concurrency/);
  });
});

describe('parsers', () => {
  const ok: [keyof typeof SETTINGS, Raw, unknown][] = [
    ['concurrency', '256', 256],
    ['concurrency', ' 3 ', 3],
    ['retries', '0', 0],
    ['maxFileBytes', 2048, 2048],
    ['timeoutMs', '1.5s', 1500],
    ['timeoutMs', '1ms', 1],
    ['intervalMs', '0', 0],
    ['intervalMs', 0, 0],
    ['debounceMs', '0', 0],
    ['shutdownTimeoutMs', '0', 0],
    ['intervalMs', '596h', 596 * 3_600_000],
    ['output', 'markdown', 'markdown'],
    ['logLevel', 'silent', 'silent'],
    ['detailedExitcode', 'true', true],
    ['detailedExitcode', 'false', false],
    ['detailedExitcode', true, true],
    ['listen', ':9464', { host: '0.0.0.0', port: 9464 }],
    ['listen', '[::1]:1', { host: '::1', port: 1 }],
    ['shardIndex', '0', 0],
  ];
  it.each(ok)('%s reads %j', (id, raw, value) => {
    expect(SETTINGS[id].parse(raw, `--${SETTINGS[id].flag}`)).toEqual(value);
  });

  const bad: [keyof typeof SETTINGS, Raw, RegExp][] = [
    ['concurrency', '0', /^--concurrency: "0" must be a whole number from 1 to 256$/],
    ['retries', '21', /^--retries: "21" must be a whole number from 0 to 20$/],
    ['maxFileBytes', '-1', /^--max-file-bytes: "-1" must be a whole number/],
    ['timeoutMs', '30', /^--timeout: "30" is not a duration \(use e\.g\. 500ms, 30s, 5m\)$/],
    ['output', 'yaml', /^--output: "yaml" is not one of text, json, markdown$/],
    ['logLevel', 'loud', /^--log-level: "loud" is not one of trace, debug, info/],
    ['detailedExitcode', 'maybe', /^--detailed-exitcode: "maybe" must be true or false$/],
    ['listen', '9464', /^--listen: "9464" is not HOST:PORT/],
    ['shardCount', 'x', /^--shard-count: "x" must be a whole number from 0 to 2147483647$/],
    // Nonsense numbers and durations are errors, not zero, "now" or forever.
    ['timeoutMs', '0', /^--timeout: "0" must be longer than 0 \(use e\.g\. 500ms, 30s, 5m\)$/],
    ['timeoutMs', 0, /^--timeout: 0 must be longer than 0/],
    ['timeoutMs', '0ms', /^--timeout: "0ms" must be longer than 0/],
    ['timeoutMs', '0.1ms', /^--timeout: "0.1ms" must be longer than 0/],
    ['timeoutMs', '-1s', /^--timeout: "-1s" is not a duration/],
    ['timeoutMs', 'NaN', /^--timeout: "NaN" is not a duration/],
    ['timeoutMs', 'NaNs', /^--timeout: "NaNs" is not a duration/],
    ['timeoutMs', 'Infinitys', /^--timeout: "Infinitys" is not a duration/],
    ['timeoutMs', '1e999', /^--timeout: "1e999" is not a duration/],
    ['timeoutMs', '1e999s', /^--timeout: "1e999s" is not a duration/],
    ['timeoutMs', '', /^--timeout: "" is not a duration/],
    ['timeoutMs', ' ', /^--timeout: " " is not a duration/],
    ['timeoutMs', 30, /^--timeout: 30 is not a duration/],
    [
      'timeoutMs',
      '597h',
      /^--timeout: "597h" is too long: at most 2147483647ms \(about 24 days\)$/,
    ],
    ['timeoutMs', `${'9'.repeat(400)}s`, /is too long/],
    ['retryDelayMs', '0', /^--retry-delay: "0" must be longer than 0/],
    ['intervalMs', '25d', /^--interval: "25d" is not a duration/],
    ['intervalMs', '600h', /^--interval: "600h" is too long/],
    ['debounceMs', '-5ms', /^--debounce: "-5ms" is not a duration/],
    ['shutdownTimeoutMs', '1e3', /^--shutdown-timeout: "1e3" is not a duration/],
    ['concurrency', '', /^--concurrency: "" must be a whole number from 1 to 256$/],
    ['concurrency', '1e2', /^--concurrency: "1e2" must be a whole number/],
    ['concurrency', '0x10', /^--concurrency: "0x10" must be a whole number/],
    ['concurrency', 'NaN', /^--concurrency: "NaN" must be a whole number/],
    ['retries', '-1', /^--retries: "-1" must be a whole number/],
    ['retries', '1.5', /^--retries: "1.5" must be a whole number/],
    ['maxFileBytes', '9'.repeat(30), /^--max-file-bytes: "9+" must be a whole number from 1/],
    ['shardIndex', '99999999999999999999', /^--shard-index: "9+" must be a whole number from 0/],
    ['shardIndex', '-1', /^--shard-index: "-1" must be a whole number/],
    // Switches read true or false exactly, as docs/flags.md says, from any source.
    ['detailedExitcode', 'YES', /^--detailed-exitcode: "YES" must be true or false$/],
    ['detailedExitcode', 'True', /^--detailed-exitcode: "True" must be true or false$/],
    ['detailedExitcode', '1', /^--detailed-exitcode: "1" must be true or false$/],
    ['detailedExitcode', 'no', /^--detailed-exitcode: "no" must be true or false$/],
    ['insecureHttp', 'on', /^--insecure-http: "on" must be true or false$/],
    ['shardFromHostname', 'yes', /^--shard-from-hostname: "yes" must be true or false$/],
    ['annotations', 'gitlab', /^--annotations: "gitlab" is not one of github, none$/],
  ];
  it.each(bad)('%s refuses %j with a ConfigError naming the flag', (id, raw, message) => {
    const s = SETTINGS[id];
    expect(() => s.parse(raw, `--${s.flag}`)).toThrow(ConfigError);
    expect(() => s.parse(raw, `--${s.flag}`)).toThrow(message);
  });

  it("the emulator's values are usage errors naming the flag", () => {
    const refused: [keyof typeof EMULATOR_SETTINGS, string, RegExp][] = [
      ['port', '70000', /^--port: 70000 is out of range \(0 to 65535\)$/],
      ['seed', 'abc', /^--seed: "abc" is not a whole number$/],
      ['failRate', '2', /^--fail-rate: "2" must be a number from 0 to 1$/],
      ['failRate', '0x1', /^--fail-rate: "0x1" must be a number from 0 to 1$/],
      ['failRate', '1e-1', /^--fail-rate: "1e-1" must be a number from 0 to 1$/],
      ['failRate', 'NaN', /^--fail-rate: "NaN" must be a number from 0 to 1$/],
      ['failRate', '', /^--fail-rate: "" must be a number from 0 to 1$/],
      ['rateLimit', 'Infinity', /^--rate-limit: "Infinity" must be a number of requests/],
      ['rateLimit', '-1', /^--rate-limit: "-1" must be a number of requests/],
      ['seed', '99999999999', /^--seed: 99999999999 is out of range/],
      ['profile', 'x', /^--profile: "x" is not one of spec, kosli$/],
      ['emulatorOrgs', 'bad org', /^--org: "bad org" is not an organization name/],
      ['headersTimeoutMs', '2h', /^--headers-timeout: "2h" must be a duration from 1ms to 1h/],
      ['host', ' ', /^--host: must not be empty$/],
    ];
    for (const [id, raw, message] of refused) {
      const s = EMULATOR_SETTINGS[id];
      expect(() => s.parse(id === 'emulatorOrgs' ? [raw] : raw, `--${s.flag}`)).toThrow(UsageError);
      expect(() => s.parse(id === 'emulatorOrgs' ? [raw] : raw, `--${s.flag}`)).toThrow(message);
    }
  });

  it('parses every default with its own parser', () => {
    const defaults = settings.flatMap(([id, s]) =>
      s.default === undefined ? [] : [[id, s, s.default] as const],
    );
    expect(defaults.length).toBeGreaterThan(20);
    for (const [id, s, value] of defaults) expect(() => s.parse(value, s.flag), id).not.toThrow();
  });
});

/** The config file schema as it was written by hand, before it was generated from the table. */
const duration = z.union([z.string(), z.literal(0)]);
const HAND_WRITTEN = z.strictObject({
  manifests: z.string().optional(),
  apiUrl: z.string().optional(),
  orgs: z.array(z.string()).optional(),
  apiDialect: z.enum(['auto', 'contract', 'kosli']).optional(),
  concurrency: z.number().int().min(1).max(256).optional(),
  retries: z.number().int().min(0).max(20).optional(),
  maxArchive: z.number().int().min(0).max(100000).optional(),
  syncWindows: z.array(z.string()).optional(),
  timeout: duration.optional(),
  retryDelay: duration.optional(),
  deadline: duration.optional(),
  maxRetryAfter: duration.optional(),
  maxResponseBytes: z.number().int().min(1024).optional(),
  state: z.string().optional(),
  stateLockTimeout: duration.optional(),
  output: z.enum(['text', 'json', 'markdown']).optional(),
  detailedExitcode: z.boolean().optional(),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).optional(),
  logFormat: z.enum(['auto', 'pretty', 'json']).optional(),
  tokenFile: z.string().optional(),
  tokenDir: z.string().optional(),
  insecureHttp: z.boolean().optional(),
  caFile: z.string().optional(),
  maxFileBytes: z.number().int().min(1).optional(),
  exclude: z.array(z.string()).optional(),
  strict: z.boolean().optional(),
  observe: z.boolean().optional(),
  interval: duration.optional(),
  debounce: duration.optional(),
  settle: duration.optional(),
  webhookMinInterval: duration.optional(),
  webhookSecretFile: z.string().optional(),
  notifyUrls: z.array(z.string()).optional(),
  notifyFormat: z.enum(['cloudevents', 'slack']).optional(),
  notifySecretFile: z.string().optional(),
  publicUrl: z.string().optional(),
  listen: z.string().optional(),
  shutdownTimeout: duration.optional(),
  shardIndex: z.number().int().min(0).optional(),
  shardCount: z.number().int().min(1).optional(),
  shardFromHostname: z.boolean().optional(),
});

describe('the generated config file schema', () => {
  it('has the same keys, in the same order', () => {
    expect(Object.keys(configFileSchema.shape)).toEqual(Object.keys(HAND_WRITTEN.shape));
  });

  const documents: unknown[] = [
    {},
    { manifests: 'm', apiUrl: 'https://x', orgs: ['a', 'b'], concurrency: 256, retries: 0 },
    { concurrency: 0 },
    { concurrency: 257 },
    { concurrency: 1.5 },
    { concurrency: '8' },
    { retries: 21 },
    { timeout: '30s', retryDelay: 0, interval: '5m', debounce: 0, shutdownTimeout: '1h' },
    { timeout: 30 },
    { timeout: true },
    { orgs: 'acme' },
    { orgs: [1] },
    { output: 'yaml' },
    { output: 'markdown', logLevel: 'silent' },
    { logLevel: 'verbose' },
    { logFormat: 'json' },
    { logFormat: 'text' },
    { detailedExitcode: 'true' },
    { insecureHttp: false, shardFromHostname: true },
    { exclude: ['k8s/', '!k8s/keep.yaml'], strict: true },
    { exclude: 'k8s/' },
    { strict: 'true' },
    { maxFileBytes: 0 },
    { maxFileBytes: 2 ** 40 },
    { shardIndex: -1 },
    { shardIndex: 0, shardCount: 0 },
    { shardCount: 3 },
    { listen: 9464 },
    { concurency: 3 },
    { emulator: true },
    { token: 'x' },
    [],
    'text',
    null,
  ];
  it.each(documents.map((d) => [JSON.stringify(d), d]))(
    'agrees with the hand-written one on %s',
    (_, document) => {
      const generated = configFileSchema.safeParse(document);
      const reference = HAND_WRITTEN.safeParse(document);
      expect(generated.success).toBe(reference.success);
      expect(generated.error?.issues[0]?.path).toEqual(reference.error?.issues[0]?.path);
      expect(generated.error?.issues[0]?.message).toEqual(reference.error?.issues[0]?.message);
    },
  );

  it('config/envsync.example.yaml shows every key of the table', async () => {
    const text = await readFile(
      new URL('../../config/envsync.example.yaml', import.meta.url),
      'utf8',
    );
    const keys = (Object.values(SETTINGS) as Setting[]).flatMap((s) =>
      s.file === undefined ? [] : [s.file.key],
    );
    expect(keys).toHaveLength(41);
    for (const key of keys) expect(text, key).toMatch(new RegExp(`^#? ?${key}:`, 'm'));
    const variables = (Object.values(SETTINGS) as Setting[]).flatMap((s) =>
      s.file === undefined || s.env === undefined ? [] : [s.env.name],
    );
    for (const name of variables) expect(text, name).toContain(name);
  });
});

/** The flags a help text lists in its flag lines, and in its list of accepted but unused ones. */
function listedFlags(help: string): { used: string[]; tolerated: string[] } {
  const [main = '', rest = ''] = help.split(
    /\nAccepted but not used by [^\n]*(?:\n[^\n ][^\n]*)?\n/,
  );
  const used = [...main.matchAll(/^ {2}(?:-[a-zA-Z], )?--([a-z-]+)/gm)].map((m) => m[1] ?? '');
  const tolerated = [...(rest.split('\n\n')[0] ?? '').matchAll(/--([a-z-]+)/g)].map(
    (m) => m[1] ?? '',
  );
  return { used, tolerated };
}

describe('help', () => {
  it.each(COMMAND_NAMES)(
    '%s --help lists exactly the flags the command takes, once each',
    (command) => {
      const help = commandHelp(command, ALL);
      const { used, tolerated } = listedFlags(help);
      const own = Object.values(ALL).filter((s) => accepts(s, command));
      expect(used.sort()).toEqual(
        own
          .filter((s) => s.commands.includes(command))
          .map((s) => s.flag)
          .sort(),
      );
      expect(tolerated.sort()).toEqual(
        own
          .filter((s) => !s.commands.includes(command))
          .map((s) => s.flag)
          .sort(),
      );
      expect(help).toMatch(new RegExp(`^Usage: envsync ${command}`));
      expect(help).toMatch(/\nExamples:\n {2}envsync /);
      for (const line of help.split('\n').filter((l) => !l.startsWith('  envsync '))) {
        expect(line.length, line).toBeLessThanOrEqual(100);
      }
    },
  );

  it('shows each flag with its value name, default and variable', () => {
    const help = commandHelp('plan', ALL);
    expect(help).toMatch(
      /^ {2}--concurrency N +requests in flight.*\[default: 8\] \[env:\s+ENVSYNC_CONCURRENCY\]/ms,
    );
    expect(help).toContain('  -o, --output FORMAT');
    expect(help).toMatch(/--org ORG .*\[repeatable\]/s);
  });
});

describe('did you mean', () => {
  it.each([
    ['validate', '--manifest', 'unknown flag --manifest (did you mean --manifests?)'],
    [
      'plan',
      '--detailed-exit-code',
      'unknown flag --detailed-exit-code (did you mean --detailed-exitcode?)',
    ],
    ['emulator', '--prot', 'unknown flag --prot (did you mean --port?)'],
    ['plan', '--interval', '--interval is not a flag of envsync plan; envsync run takes it'],
    [
      'validate',
      '--out',
      '--out is not a flag of envsync validate; envsync plan, sync and export take it',
    ],
    ['run', '-o', '-o is not a flag of envsync run; envsync validate, plan and sync take it'],
    ['plan', '--port', '--port is not a flag of envsync plan; envsync emulator takes it'],
    ['plan', '--dryrun', 'unknown flag --dryrun (did you mean --dry-run? envsync sync takes it)'],
    ['schema', '--bogus', 'unknown flag --bogus'],
  ] as const)('envsync %s %s', (command, flag, message) => {
    expect(unknownFlagMessage(flag, command, ALL)).toBe(message);
  });
});

describe('docs/flags.md', () => {
  // That the committed file is what the table generates is checked with every generated file, in
  // test/generate/generated-files.test.ts.
  it('lists every flag of every command, with its variable and config key', () => {
    const doc = flagsDoc(ALL);
    const all = Object.values(ALL);
    for (const s of all) expect(doc).toContain(`\`--${s.flag}`);
    for (const name of all.flatMap((s) => (s.env === undefined ? [] : [s.env.name]))) {
      expect(doc).toContain(`\`${name}\``);
    }
    for (const key of all.flatMap((s) => (s.file === undefined ? [] : [s.file.key]))) {
      expect(doc).toContain(`\`${key}\``);
    }
  });
});
