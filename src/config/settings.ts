/** The settings validate, plan, sync, run and export share, and their resolution. */
import path from 'node:path';
import { DIALECT_SETTINGS } from '../core/dialect.ts';
import { OUTPUT_FORMATS } from '../core/renderers.ts';
import { LOG_FORMATS } from '../runtime/log-line.ts';
import { readConfigFile } from './config-file.ts';
import { DAEMON_SETTINGS } from './daemon-settings.ts';
import {
  bool,
  byteSize,
  durationMs,
  integer,
  oneOf,
  outputFormat,
  filePath,
  syncWindows,
  text,
  texts,
} from './parsers.ts';
import {
  API,
  COMMAND_NAMES,
  named,
  ONE_SHOT,
  RECONCILING,
  SETTING_COMMANDS,
  resolveValues,
  type ConfigFile,
  type Flags,
  type SettingsTable,
  type ValuesOf,
} from './setting.ts';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** validate takes plan's API flags, unused, so one command line or wrapper serves both. */
const API_ROW = { commands: API, tolerated: ['validate'], group: 'api' } as const;
const RECONCILING_API = { ...API_ROW, commands: RECONCILING } as const;
/** Which files below the manifests root are manifests. */
const MANIFEST_FILES = { commands: [...ONE_SHOT, 'run', 'migrate'], group: 'manifests' } as const;

export const SETTINGS = {
  manifests: {
    ...named('--manifests DIR', 'manifests', MANIFEST_FILES),
    help: 'the manifests root (*.yaml and *.yml files at any depth)',
    parse: filePath,
    default: 'manifests',
  },
  apiUrl: {
    ...named('--api-url URL', 'apiUrl', API_ROW),
    help: "the API's base address, required (run: or --emulator); requests go to {URL}/api/v2/environments/{org}; https unless the host is loopback",
    parse: text,
  },
  orgs: {
    ...named('--org ORG', 'orgs', { commands: SETTING_COMMANDS, group: 'manifests' }),
    help: 'only this org; for export, an org to export (at least one)',
    parse: texts,
    defaultText: 'every org of the manifests',
  },
  apiDialect: {
    ...named('--api-dialect DIALECT', 'apiDialect', API_ROW),
    help: 'which API: contract (the two operations of the contract), kosli (the production service\'s published operations) or auto (read from the first listing\'s shape: {"env": [...]} is contract, a bare array or a paged envelope kosli)',
    parse: oneOf(DIALECT_SETTINGS),
    default: 'auto',
  },
  concurrency: {
    ...named('--concurrency N', 'concurrency', API_ROW),
    help: 'requests in flight at once, GETs and PUTs of every org together (1 to 256)',
    parse: integer(1, 256),
    default: '8',
  },
  retries: {
    ...named('--retries N', 'retries', API_ROW),
    help: 'retries per request after the first attempt (0 to 20); a refused connection or a host name that does not resolve gets one at most, a certificate that cannot be verified none',
    parse: integer(0, 20),
    default: '4',
  },
  maxArchive: {
    ...named('--max-archive N', 'maxArchive', RECONCILING_API),
    help: 'the most environments one org may archive in one pass under prune: true; more are all refused (its other changes still apply), unless applied from a reviewed plan with sync --plan (0 to 100000)',
    parse: integer(0, 100000),
    default: '5',
  },
  syncWindows: {
    ...named('--sync-window WINDOW', 'syncWindows', RECONCILING_API),
    help: 'a sync window, "allow|deny DAYS HH:MM DURATION [TIME-ZONE]" (e.g. "allow mon-fri 09:00 8h Europe/Berlin"): changes are sent only inside an allow window (when there is one) and never inside a deny window; sync and run plan and wait outside',
    parse: syncWindows,
    defaultText: 'none: changes may be sent at any time',
  },
  timeoutMs: {
    ...named('--timeout DURATION', 'timeout', API_ROW),
    help: 'each attempt of a request: connecting (at most 10s of it), then the whole answer, headers and body; a retry has its own, and --deadline bounds them all',
    parse: durationMs(),
    default: '30s',
  },
  retryDelayMs: {
    ...named('--retry-delay DURATION', 'retryDelay', API_ROW),
    help: 'first backoff delay; it doubles, with jitter, up to 30s',
    parse: durationMs(),
    default: '1s',
  },
  deadlineMs: {
    ...named('--deadline DURATION', 'deadline', API_ROW),
    help: 'the whole run (run: each pass), throttled waits and backoff included: after it no request is started, nor any wait that would end after it; what is left is reported "not sent" and the run exits 1 (requests in flight finish within --timeout)',
    parse: durationMs(24 * 3_600_000),
    default: '5m',
  },
  maxRetryAfterMs: {
    ...named('--max-retry-after DURATION', 'maxRetryAfter', API_ROW),
    help: 'longest Retry-After (429, 503) honoured at a time; a longer one is waited this long, then the request is tried again (within --deadline)',
    parse: durationMs(3_600_000),
    default: '2m',
  },
  maxResponseBytes: {
    ...named('--max-response-bytes N', 'maxResponseBytes', API_ROW),
    help: 'largest answer read from the API, in bytes (or with a KiB or MiB suffix); a larger one fails its org, final, and is not downloaded again in the run',
    parse: byteSize(1024, 1024 ** 3),
    default: '8MiB',
  },
  state: {
    ...named('--state FILE', 'state'),
    commands: RECONCILING,
    tolerated: ['validate'],
    group: 'manifests',
    help: 'the state file: what was last applied of the fields a listing may not show',
    parse: filePath,
    default: '.envsync/state.json',
  },
  stateLockTimeoutMs: {
    ...named('--state-lock-timeout DURATION', 'stateLockTimeout'),
    commands: ['sync', 'run'],
    tolerated: ['validate', 'plan'],
    group: 'manifests',
    help: "how long a write of the state file waits for another writer's lock (<state>.lock) before it fails; plan never writes, never waits",
    parse: durationMs(),
    default: '30s',
  },
  output: {
    ...named('-o, --output FORMAT', 'output', { commands: ONE_SHOT, group: 'output' }),
    help: `the report's format: ${OUTPUT_FORMATS.join(', ')}`,
    parse: outputFormat(OUTPUT_FORMATS),
    default: 'text',
  },
  detailedExitcode: {
    ...named('--detailed-exitcode', 'detailedExitcode'),
    commands: ['plan', 'sync'],
    tolerated: ['validate'],
    group: 'output',
    help: 'exit 2 when there is no error and changes are pending (plan, sync --dry-run)',
    parse: bool,
    default: false,
  },
  logLevel: {
    ...named('--log-level LEVEL', 'logLevel'),
    commands: [...SETTING_COMMANDS, 'migrate'],
    group: 'general',
    help: `what is logged on stderr: ${LOG_LEVELS.join(', ')}`,
    parse: oneOf(LOG_LEVELS),
    defaultText: 'info; warn for the JSON logs of validate, plan, sync and export',
  },
  logFormat: {
    ...named('--log-format FORMAT', 'logFormat'),
    commands: [...SETTING_COMMANDS, 'migrate', 'emulator'],
    group: 'general',
    help: 'how stderr logs look: pretty (one line per event), json (one object per line) or auto (pretty on a terminal, json otherwise)',
    parse: oneOf(LOG_FORMATS),
    default: 'auto',
  },
  tokenFile: {
    ...named('--token-file PATH', 'tokenFile', API_ROW),
    help: 'read the token from PATH, before every pass (a rotated Secret is picked up); without it, ENVSYNC_TOKEN; with --token-dir, the token of the orgs with no file there',
    parse: filePath,
  },
  tokenDir: {
    ...named('--token-dir DIR', 'tokenDir', API_ROW),
    help: 'a token per org: the file named after the org in DIR holds its token (a Kubernetes Secret with one key per org, mounted whole), read before every pass; an org with no file uses --token-file or ENVSYNC_TOKEN, and fails without one',
    parse: filePath,
  },
  insecureHttp: {
    ...named('--insecure-http', 'insecureHttp', API_ROW),
    help: 'allow plain http:// to a non-loopback host (the token would travel in clear text)',
    parse: bool,
    default: false,
  },
  caFile: {
    ...named('--ca-file PATH', 'caFile', API_ROW),
    help: 'extra CA certificates (PEM) to trust for https',
    parse: filePath,
  },
  maxFileBytes: {
    ...named('--max-file-bytes N', 'maxFileBytes', MANIFEST_FILES),
    help: 'largest manifest file read, in bytes',
    parse: integer(1, 1024 ** 3),
    default: '1048576',
  },
  exclude: {
    // Not a path relative to the config file: a pattern is matched below the manifests root.
    ...named('--exclude GLOB', 'exclude', MANIFEST_FILES),
    help: "leave out the files and folders GLOB matches (gitignore syntax, relative to the manifests root), after the lines of the root's .envsyncignore file",
    parse: texts,
    defaultText: 'none',
  },
  strict: {
    ...named('--strict', 'strict', MANIFEST_FILES),
    commands: [...ONE_SHOT, 'run'],
    help: 'a YAML file with neither org nor environments (a Kubernetes object, a CI file) is an error, not skipped; so is a manifests root without a manifest (run: a warning), and a key the service retired (include_scaling, in the kosli dialect)',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;

/** --config (read first, to find the file) and --help. */
export const GENERAL_SETTINGS = {
  config: {
    flag: '-c, --config FILE',
    env: 'ENVSYNC_CONFIG',
    commands: [...SETTING_COMMANDS, 'migrate'],
    group: 'general',
    help: 'YAML config file (see config/envsync.example.yaml); its paths are relative to it',
    parse: text,
  },
  help: {
    flag: '-h, --help',
    commands: COMMAND_NAMES,
    group: 'general',
    help: 'show this help',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;

/** Resolved settings for validate / plan / sync / run / export, as the table types them. */
export type Settings = Readonly<ValuesOf<typeof SETTINGS>>;

/** Resolves the settings: flags > environment > config file > defaults. */
export async function resolveSettings(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Settings & { readonly file: ConfigFile; readonly fileDir: string }> {
  // Read within the --deadline of the flags or the environment (the file's own comes too late).
  const { config, deadlineMs } = resolveValues(
    { config: GENERAL_SETTINGS.config, deadlineMs: SETTINGS.deadlineMs },
    { flags, env },
  );
  const configPath = config === undefined ? undefined : path.resolve(cwd, config);
  const file =
    configPath === undefined
      ? {}
      : await readConfigFile(configPath, { ...SETTINGS, ...DAEMON_SETTINGS }, deadlineMs);
  // Paths in the config file are relative to the file; on the command line, to the working dir.
  const fileDir = configPath === undefined ? cwd : path.dirname(configPath);
  return { ...resolveValues(SETTINGS, { flags, env, file, fileDir }), file, fileDir };
}
