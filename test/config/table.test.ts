/** The settings tables: each command's flags, precedence, parsers, help, did-you-mean and docs. */
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { commandHelp, flagsDoc } from '../../src/commands/help.ts';
import { flagOptions, unknownFlagMessage } from '../../src/config/flags.ts';
import {
  accepts,
  COMMAND_NAMES,
  flagOf,
  resolveSetting,
  resolveValues,
  type CommandName,
  type Flags,
  type Raw,
  type Setting,
} from '../../src/config/setting.ts';
import { SETTINGS } from '../../src/config/settings.ts';
import { allSettings, settingsOf } from '../../src/main.ts';
import { ConfigError } from '../../src/runtime/errors.ts';

const ALL = await allSettings();
const rows = Object.entries(ALL);
const row = (id: string): Setting => ALL[id] ?? expect.fail(`no setting ${id}`);

/** Every flag each command took before the tables (the product's contract). */
const SHARED =
  'api-dialect api-url ca-file concurrency config deadline detailed-exitcode exclude insecure-http ' +
  'log-format log-level manifests max-archive max-file-bytes max-response-bytes max-retry-after ' +
  'org output retries retry-delay state state-lock-timeout strict sync-window timeout token-dir ' +
  'token-file help';
const EXPECTED: Record<CommandName, string> = {
  validate: `${SHARED} annotations summary-file`,
  plan: `${SHARED} annotations summary-file out`,
  sync: `${SHARED} annotations summary-file out dry-run plan ignore-windows observe`,
  run:
    SHARED.replace(/ output| detailed-exitcode/g, '') +
    ' debounce observe emulator interval listen notify-format notify-secret-file notify-url ' +
    'github-token-file github-api-url emulator-profile ' +
    'public-url shard-count shard-from-hostname settle shard-index shutdown-timeout ' +
    'webhook-min-interval webhook-secret-file',
  export:
    'api-dialect api-url ca-file concurrency config deadline force help insecure-http log-format ' +
    'log-level max-response-bytes max-retry-after org out retries retry-delay timeout token-dir ' +
    'token-file',
  migrate: 'config exclude help log-format log-level manifests max-file-bytes write',
  schema: 'help',
  emulator:
    'data fail-rate fault-placeholder hang-rate headers-timeout help host latency log-format ' +
    'log-level org port ' +
    'profile rate-limit request-timeout reset-rate seed token',
};
const SHORT = { o: 'output', c: 'config', h: 'help' };

describe('the tables', () => {
  it.each(COMMAND_NAMES)(
    '%s takes exactly the flags it always took, each once',
    async (command) => {
      const options = flagOptions(await settingsOf(command), command);
      expect(Object.keys(options).sort()).toEqual(EXPECTED[command].split(' ').sort());
      const shorts = Object.entries(options).flatMap(([flag, o]) =>
        o.short === undefined ? [] : [[o.short, flag]],
      );
      expect(Object.entries(SHORT)).toEqual(expect.arrayContaining(shorts));
      const own = rows.map(([, s]) => s).filter((s) => accepts(s, command));
      expect(new Set(own.map((s) => flagOf(s).long)).size).toBe(own.length);
    },
  );

  it('gives each row a help line, known commands, and each variable once', () => {
    for (const [id, s] of rows) {
      expect(s.help, id).not.toBe('');
      expect(COMMAND_NAMES, id).toEqual(expect.arrayContaining([...s.commands]));
    }
    const names = rows.flatMap(([, s]) => (s.env === undefined ? [] : [s.env]));
    expect(new Set(names).size).toBe(names.length);
  });
});

/** Three distinct valid raw values of a setting: for its flag, its variable and the config file. */
function samples(s: Setting): [flag: Raw, env: string, file: Raw] | undefined {
  const valid = (values: string[]) =>
    values.filter((value) => {
      try {
        return s.parse(value, 'x') !== undefined;
      } catch {
        return false;
      }
    });
  switch (s.parse.words) {
    case 'duration':
      return ['1s', '2s', '3s'];
    case 'whole number': {
      const [a = '', b = '', c = ''] = valid(['2', '3', '4', '2000', '2001', '2002']);
      return [a, b, Number(c)];
    }
    case 'one of the values': {
      const values = (s.parse.schema as z.ZodEnum).options as string[];
      return [values[0] ?? '', values[1] ?? '', values[2 % values.length] ?? ''];
    }
    case 'text':
    case 'text, relative to the file':
      return valid(['from-flag', 'from-env', 'from-file']).length === 3
        ? ['from-flag', 'from-env', 'from-file']
        : s.file === 'listen'
          ? ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3']
          : ['https://flag.example', 'https://env.example', 'https://file.example'];
    default:
      return undefined;
  }
}

describe('precedence: flags > environment > config file > defaults', () => {
  const valued = rows.filter(
    ([, s]) => s.env !== undefined && s.envRead === undefined && samples(s) !== undefined,
  );

  it.each(valued)('%s', (_id, s) => {
    const [flag, env, file] = samples(s) ?? ['', '', ''];
    const sources = (f: boolean, e: boolean, c: boolean) => ({
      flags: f ? { [flagOf(s).long]: flag as string } : {},
      env: e ? { [s.env ?? '']: env } : {},
      file: c && s.file !== undefined ? { [s.file]: file } : {},
      fileDir: '/config',
    });
    const fromFile = s.parse.path === true ? `/config/${String(file)}` : file;
    const last = s.file === undefined ? s.default : fromFile;
    const parse = (raw: Raw | undefined) => (raw === undefined ? undefined : s.parse(raw, s.flag));
    const emptyVariable = { ...sources(false, false, true), env: { [s.env ?? '']: '' } };
    expect([
      resolveSetting(s, sources(true, true, true)),
      resolveSetting(s, sources(false, true, true)),
      resolveSetting(s, sources(false, false, true)),
      resolveSetting(s, { flags: {}, env: {} }),
      resolveSetting(s, emptyVariable),
    ]).toEqual([parse(flag), parse(env), parse(last), parse(s.default), parse(last)]);
  });

  it('switches: a flag beats a variable, a variable beats the file, true or false only', () => {
    for (const id of ['insecureHttp', 'shardFromHostname', 'strict'] as const) {
      const s = row(id);
      const [name, key, long] = [s.env ?? '', s.file ?? '', flagOf(s).long];
      expect(resolveSetting(s, { flags: { [long]: true }, env: { [name]: 'false' } })).toBe(true);
      const file = { [key]: true };
      expect(resolveSetting(s, { flags: {}, env: { [name]: 'false' }, file })).toBe(false);
      expect(resolveSetting(s, { flags: {}, env: {}, file })).toBe(true);
      expect(resolveSetting(s, { flags: {}, env: {} })).toBe(false);
      for (const word of ['no', '0', 'TRUE', 'yes']) {
        expect(() => resolveSetting(s, { flags: {}, env: { [name]: word } })).toThrow(
          `--${long}: "${word}" must be true or false`,
        );
      }
    }
  });

  it('reads the variables that have a form of their own', () => {
    const read = (id: string, env: NodeJS.ProcessEnv, file?: Record<string, unknown>) =>
      resolveSetting(row(id), { flags: {}, env, ...(file === undefined ? {} : { file }) });
    expect(read('orgs', { ENVSYNC_ORGS: 'a, b,,c ' })).toEqual(['a', 'b', 'c']);
    // Set but empty of names: no org at all, which is not the same as every org.
    expect(read('orgs', { ENVSYNC_ORGS: ',' })).toEqual([]);
    // The variable replaces the config file's list; it does not add to it.
    expect(read('exclude', { ENVSYNC_EXCLUDE: 'k8s/, *.ci.yaml,,' }, { exclude: ['ci/'] })).toEqual(
      ['k8s/', '*.ci.yaml'],
    );
    // A window's line has commas: the windows are separated by semicolons.
    const windows = 'allow mon,tue 09:00 8h; deny * 22:00 8h';
    expect(read('syncWindows', { ENVSYNC_SYNC_WINDOWS: windows })).toHaveLength(2);
    const actions = (value: string) => read('annotations', { GITHUB_ACTIONS: value });
    expect([actions('true'), actions('false')]).toEqual(['github', 'none']);
    const flags = { annotations: 'none' };
    expect(resolveSetting(row('annotations'), { flags, env: { GITHUB_ACTIONS: 'true' } })).toBe(
      'none',
    );
  });

  it('paths from the config file are relative to it; patterns and URLs, and flags and variables, are not', () => {
    const paths = rows.filter(([, s]) => s.parse.path === true).map(([id]) => id);
    const expected =
      'caFile githubTokenFile manifests notifySecretFile state tokenDir tokenFile webhookSecretFile';
    expect(paths.sort()).toEqual(expected.split(' '));
    const file = { exclude: ['k8s/'], apiUrl: 'https://a' };
    const fromFile = (id: string) =>
      resolveSetting(row(id), { flags: {}, env: {}, file, fileDir: '/d' });
    expect([fromFile('exclude'), fromFile('apiUrl')]).toEqual([['k8s/'], 'https://a']);
    const state = (flags: Flags, env: NodeJS.ProcessEnv) =>
      resolveSetting(row('state'), { flags, env, fileDir: '/d' });
    expect([state({ state: 'x/y' }, {}), state({}, { ENVSYNC_STATE: 'x/y' })]).toEqual([
      'x/y',
      'x/y',
    ]);
  });

  it('resolves a whole table in its order, so the first bad value is the one reported', () => {
    expect(() =>
      resolveValues(SETTINGS, { flags: { concurrency: '0', retries: '99' }, env: {} }),
    ).toThrow(/^--concurrency/);
  });
});

describe('parsers', () => {
  const ok: [string, Raw, unknown][] = [
    ['concurrency', '256', 256],
    ['concurrency', ' 3 ', 3],
    ['retries', '0', 0],
    ['maxFileBytes', 2048, 2048],
    ['maxResponseBytes', '8MiB', 8 * 1024 ** 2],
    ['maxResponseBytes', '64k', 65536],
    ['timeoutMs', '1.5s', 1500],
    ['timeoutMs', '1ms', 1],
    ['intervalMs', '0', 0],
    ['intervalMs', 0, 0],
    ['shutdownTimeoutMs', '0', 0],
    ['intervalMs', '596h', 596 * 3_600_000],
    ['deadlineMs', '24h', 24 * 3_600_000],
    ['listen', ':9464', { host: '0.0.0.0', port: 9464 }],
    ['listen', '[::1]:1', { host: '::1', port: 1 }],
    ['publicUrl', 'https://a.example/x/?q#f', 'https://a.example/x'],
    ['notifyUrls', [' slack:https://h/ '], ['slack:https://h/']],
    ['port', '0', 0],
    ['failRate', '.25', 0.25],
    ['latency', '10-50', { min: 10, max: 50 }],
  ];
  it.each(ok)('%s reads %j', (id, raw, value) => {
    expect(row(id).parse(raw, row(id).flag)).toEqual(value);
  });

  // Nonsense numbers and durations are errors, not zero, "now" or forever; switches are true or
  // false exactly, from any source.
  const bad: [string, Raw, string][] = [
    ['concurrency', '0', '--concurrency: "0" must be a whole number from 1 to 256'],
    ['retries', '21', '--retries: "21" must be a whole number from 0 to 20'],
    ['shardCount', 'x', '--shard-count: "x" must be a whole number from 0 to 2147483647'],
    ['timeoutMs', '30', '--timeout: "30" is not a duration (use e.g. 500ms, 30s, 5m)'],
    ['timeoutMs', '0', '--timeout: "0" must be longer than 0 (use e.g. 500ms, 30s, 5m)'],
    ['timeoutMs', 0, '--timeout: 0 must be longer than 0'],
    ['timeoutMs', '0.1ms', '--timeout: "0.1ms" must be longer than 0'],
    ['timeoutMs', '597h', '--timeout: "597h" is too long: at most 2147483647ms (about 24 days)'],
    [
      'deadlineMs',
      '25h',
      '--deadline: "25h" must be a duration above 0 and at most 24h (e.g. 30s, 5m)',
    ],
    [
      'maxResponseBytes',
      '1',
      '--max-response-bytes: "1" must be a size from 1024 bytes to 1024 MiB',
    ],
    ['output', 'yaml', '--output: "yaml" is not one of text, json, markdown'],
    ['detailedExitcode', 'True', '--detailed-exitcode: "True" must be true or false'],
    ['listen', '9464', '--listen: "9464" is not HOST:PORT'],
    ['publicUrl', 'x', '--public-url: "x" is not an http(s) URL'],
    ['notifyUrls', ['http://a', 'ftp://b'], '--notify-url: the 2nd URL has the scheme "ftp:"'],
    ['syncWindows', ['allow xyz 09:00 8h'], '--sync-window: "xyz" is not a day'],
    ['port', '70000', '--port: "70000" must be a whole number from 0 to 65535'],
    ['failRate', '1e-1', '--fail-rate: "1e-1" must be a number from 0 to 1'],
    ['rateLimit', 'Infinity', '--rate-limit: "Infinity" must be a number of requests per second'],
    ['profile', 'x', '--profile: "x" is not one of spec, kosli'],
    ['emulatorOrgs', ['bad org'], '--org: "bad org" is not an organization name'],
    ['headersTimeoutMs', '2h', '--headers-timeout: "2h" must be a duration above 0 and at most 1h'],
    ['host', ' ', '--host: must not be empty'],
    ['latency', '50-10', '--latency: minimum 50 is above maximum 10'],
    ['tokens', ['has space'], '--token: the token must not be empty or contain spaces'],
  ];
  it.each([
    ...bad,
    ...['-1s', 'NaN', 'NaNs', 'Infinitys', '1e999', '', ' '].map((raw): [string, Raw, string] => [
      'timeoutMs',
      raw,
      `--timeout: ${JSON.stringify(raw)} is not a duration`,
    ]),
    ...['', '1e2', '0x10', '-1', '1.5', '9'.repeat(30)].map((raw): [string, Raw, string] => [
      'retries',
      raw,
      `--retries: ${JSON.stringify(raw)} must be a whole number`,
    ]),
  ])('%s refuses %j with a ConfigError naming the flag', (id, raw, message) => {
    const s = row(id);
    expect(() => s.parse(raw, `--${flagOf(s).long}`)).toThrow(ConfigError);
    expect(() => s.parse(raw, `--${flagOf(s).long}`)).toThrow(message);
  });

  it('parses every default with its own parser', () => {
    const defaults = rows.filter(([, s]) => s.default !== undefined);
    expect(defaults.length).toBeGreaterThan(20);
    for (const [id, s] of defaults)
      expect(() => s.parse(s.default ?? '', s.flag), id).not.toThrow();
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
    async (command) => {
      const table = await settingsOf(command);
      const help = commandHelp(command, table);
      const { used, tolerated } = listedFlags(help);
      const own = Object.values(table).filter((s) => accepts(s, command));
      const longs = (keep: boolean) =>
        own
          .filter((s) => s.commands.includes(command) === keep)
          .map((s) => flagOf(s).long)
          .sort();
      expect(used.sort()).toEqual(longs(true));
      expect(tolerated.sort()).toEqual(longs(false));
      expect(help).toMatch(new RegExp(`^Usage: envsync ${command}`));
      expect(help).toMatch(/\nExamples:\n {2}envsync /);
      for (const line of help.split('\n').filter((l) => !l.startsWith('  envsync '))) {
        expect(line.length, line).toBeLessThanOrEqual(100);
      }
    },
  );

  it('shows each flag with its value name, default and variable', async () => {
    const help = commandHelp('plan', await settingsOf('plan'));
    expect(help).toMatch(
      /^ {2}--concurrency N +requests in flight.*\[default: 8\] \[env:\s+ENVSYNC_CONCURRENCY\]/ms,
    );
    expect(help).toContain('  -o, --output FORMAT');
    expect(help).toMatch(/--org ORG .*\[repeatable\]/s);
    expect(help).toMatch(
      /--sync-window WINDOW .*\[env:\s+ENVSYNC_SYNC_WINDOWS,\s+semicolon-separated\]/s,
    );
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
  // That the committed file is what the tables generate is checked with every generated file, in
  // test/generate/generated-files.test.ts.
  it('lists every flag of every command, with its variable and config key', () => {
    const doc = flagsDoc(ALL);
    const said = rows.flatMap(([, s]) => [
      `--${flagOf(s).long}`,
      ...(s.env === undefined ? [] : [`\`${s.env}\``]),
      ...(s.file === undefined ? [] : [`\`${s.file}\` (${s.parse.words})`]),
    ]);
    for (const text of said) expect(doc).toContain(text);
  });
});
