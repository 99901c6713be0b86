/** `envsync --help`, each command's --help and docs/flags.md, from the settings tables. */
import { listed } from '../config/flags.ts';
import { GENERAL_SETTINGS } from '../config/settings.ts';
import {
  accepts,
  COMMAND_NAMES,
  flagOf,
  GROUPS,
  type CommandName,
  type Setting,
  type SettingsTable,
} from '../config/setting.ts';

/** What the help says about a command besides its flags; `operands`: it takes `PATH...`. */
interface CommandInfo {
  readonly summary: string;
  readonly synopsis: string;
  readonly operands?: boolean;
  readonly description: string;
  readonly examples: readonly string[];
  readonly notes?: string;
}

const PRECEDENCE = 'Precedence: flags > environment > config file > defaults.';
const PLAN_EXIT_CODES = `Exit codes: 0 success; 1 error (invalid manifests, failed org or change, not converged);
            2 changes pending (only with --detailed-exitcode, plan or sync --dry-run).`;

/** Each command's help, besides its flags (those come from the settings table). */
export const COMMANDS: Readonly<Record<CommandName, CommandInfo>> = {
  validate: {
    summary: 'validate the manifests (offline, no token)',
    synopsis: 'envsync validate [flags] [PATH...]',
    operands: true,
    description:
      'Reads and validates every manifest, offline (no token, no request). With PATHs, only those files (each read as a manifest, whatever its name) and folders (walked like --manifests); the checks across files of one org run over what is given.',
    examples: [
      'envsync validate --manifests manifests',
      'envsync validate manifests/acme.yaml manifests/beta/',
      'envsync validate --output json --annotations github',
    ],
    notes: `${PRECEDENCE}\nExit codes: 0 every selected manifest is valid; 1 a problem, or a usage or configuration error.`,
  },
  plan: {
    summary: 'show what sync would change (never writes)',
    synopsis: 'envsync plan [flags]',
    description:
      'Shows what sync would change. The same as "envsync sync --dry-run": it never writes to the API.',
    examples: [
      'envsync plan --manifests manifests --api-url https://app.example.com --detailed-exitcode',
      'envsync plan --out plan.json --output markdown > plan.md',
    ],
    notes: `${PRECEDENCE}\n${PLAN_EXIT_CODES}`,
  },
  sync: {
    summary: 'make the service match the manifests (--dry-run: plan only)',
    synopsis: 'envsync sync [--dry-run | --plan FILE] [flags]',
    description:
      'Plans, applies (PUT with retries), verifies and records every org of the manifests.',
    examples: [
      'envsync sync --manifests manifests --api-url https://app.example.com --output markdown',
      'envsync sync --plan plan.json',
    ],
    notes: `${PRECEDENCE}\n${PLAN_EXIT_CODES}`,
  },
  run: {
    summary: 'keep the service in step with the manifests, continuously',
    synopsis: 'envsync run [flags]',
    description:
      "Runs the long-running reconciler: watches the manifests (and git-sync's symlink swaps), resyncs on an interval, serves /healthz /readyz /metrics /status and POST /reconcile.",
    examples: [
      'envsync run --manifests /git/repo/manifests --api-url https://app.example.com --token-file /var/run/secrets/envsync/token',
      'envsync run --manifests examples/manifests --emulator --emulator-profile kosli',
    ],
    notes: `${PRECEDENCE}\nSignals: SIGHUP starts a pass; SIGTERM/SIGINT stop gracefully (exit 0).`,
  },
  status: {
    summary: 'ask a running daemon how each org stands',
    synopsis: 'envsync status [--url URL] [--org ORG] [-o text|json]',
    description:
      "Reads a running daemon's /status and prints one line per org: its health (can envsync read, plan and send), its sync (does the service hold what the manifests declare), the revision, the last pass and a message.",
    examples: ['envsync status', 'envsync status --url http://envsync:9464 --org acme -o json'],
    notes: `Exit codes: 0 every org healthy and synced; 1 an org or the daemon failing, or
            no answer; 2 otherwise (out of sync, drifted, waiting, suspended, degraded).`,
  },
  export: {
    summary: "write orgs' environments, as the API lists them, as manifests",
    synopsis: 'envsync export --org ORG [--org ORG...] [--out DIR] [--force] [flags]',
    description:
      'Writes each org\'s environments, as the API lists them, as a manifest that "envsync validate" accepts: a way in for teams whose environments already exist. A round trip (export, then plan) shows nothing to create or update. At least one --org is required.',
    examples: [
      'envsync export --org acme --org globex --out manifests --api-url https://app.example.com',
    ],
    notes: `${PRECEDENCE}\nExit codes: 0 every org exported; 1 an org failed, or a usage or configuration error.`,
  },
  migrate: {
    summary: 'rewrite the manifests for the service as it is today (retired keys removed)',
    synopsis: 'envsync migrate [flags]',
    description:
      'Shows, as a unified diff on stdout, the manifests rewritten for the service as it is today: the keys it retired (include_scaling) removed from every environment, and nothing else changed (comments, key order and formatting stay). With --write, writes them.',
    examples: [
      'envsync migrate --manifests manifests',
      'envsync migrate --manifests manifests --write',
    ],
    notes: `${PRECEDENCE}\nExit codes: 0 nothing to change (or --write rewrote them); 2 a manifest would change; 1 an error.`,
  },
  schema: {
    summary: 'print the JSON Schema of a manifest (for editors)',
    synopsis: 'envsync schema',
    description:
      'Prints the JSON Schema (draft 2020-12) of a manifest document, generated from the schema the validator uses. Save it and point your editor at it, e.g. with a first line\n  # yaml-language-server: $schema=./manifest.schema.json',
    examples: ['envsync schema > manifest.schema.json'],
  },
  emulator: {
    summary: 'run a local emulator of the Environments API',
    synopsis: 'envsync emulator [flags]',
    description:
      'Runs a local emulator of the Environments API. Its first line on stdout is "listening on http://HOST:PORT"; logs go to stderr. SIGTERM or SIGINT stop it gracefully (a second signal stops it at once).',
    examples: [
      'envsync emulator --org acme --token dev-token',
      'envsync emulator --port 0 --fail-rate 0.2 --latency 10-50 --seed 42',
    ],
  },
};

/** The line under a flag error: the usage, and where the flags are listed. */
export function shortUsage(command: CommandName): string {
  return `Usage: ${COMMANDS[command].synopsis} ("envsync ${command} --help" lists the flags)`;
}

const WIDTH = 100;
/** Where a flag's help starts. */
const COLUMN = 27;

/** `words` joined by `gap`, wrapped: the first line after `first` columns, the others `indent`. */
function fill(words: readonly string[], gap: string, first: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const room = WIDTH - (lines.length === 0 ? first : indent);
    if (line !== '' && line.length + gap.length + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line}${gap}${word}`;
    }
  }
  return [...lines, line].join(`\n${' '.repeat(indent)}`);
}

/** A paragraph wrapped to WIDTH; its own line breaks and indents are kept. */
function paragraph(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const indent = /^ */.exec(line)?.[0].length ?? 0;
      return ' '.repeat(indent) + fill(line.slice(indent).split(' '), ' ', indent, indent);
    })
    .join('\n');
}

/** The default as help and docs show it, or undefined when there is nothing to show. */
function defaultShown(setting: Setting): string | undefined {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === undefined || value === false || (Array.isArray(value) && value.length === 0))
    return undefined;
  return String(value);
}

/** How the variable's text is read, when not as it is: `true or false`, `comma-separated`. */
function envNote(setting: Setting): string | undefined {
  const { separator } = setting.parse;
  if (setting.envRead !== undefined) return setting.envRead.note;
  if (separator !== undefined) return separator === ',' ? 'comma-separated' : 'semicolon-separated';
  return flagOf(setting).valued ? undefined : 'true or false';
}

/** The help line of a setting with what the table knows: repeatable, default, variable. */
function description(setting: Setting): string {
  const shown = defaultShown(setting);
  const note = envNote(setting);
  return [
    setting.help,
    ...(setting.parse.separator === undefined ? [] : ['[repeatable]']),
    ...(shown === undefined ? [] : [`[default: ${shown}]`]),
    ...(setting.env === undefined
      ? []
      : [`[env: ${setting.env}${note === undefined ? '' : `, ${note}`}]`]),
  ].join(' ');
}

function flagLine(setting: Setting): string {
  const label = `  ${setting.flag}`;
  const text = fill(description(setting).split(' '), ' ', COLUMN, COLUMN);
  return label.length < COLUMN - 1
    ? `${label.padEnd(COLUMN)}${text}`
    : `${label}\n${' '.repeat(COLUMN)}${text}`;
}

/** The help of one command: usage, description, its flags by group, examples, notes. */
export function commandHelp(command: CommandName, table: SettingsTable): string {
  const info = COMMANDS[command];
  const settings = Object.values(table).filter((s) => accepts(s, command));
  const used = settings.filter((s) => s.commands.includes(command));
  const tolerated = settings.filter((s) => !s.commands.includes(command));
  const sections = [`Usage: ${info.synopsis}`, paragraph(info.description)];
  for (const [group, title] of Object.entries(GROUPS)) {
    // --help closes its group, wherever the table declares it.
    const { help } = GENERAL_SETTINGS;
    const members = used
      .filter((s) => s.group === group)
      .sort((a, b) => Number(a === help) - Number(b === help));
    if (members.length > 0) sections.push(`${title}:\n${members.map(flagLine).join('\n')}`);
  }
  if (tolerated.length > 0) {
    const others = listed([...new Set(tolerated.flatMap((s) => s.commands))]);
    const intro = `Accepted but not used by ${command}, so that the same command line works for ${others}:`;
    const flags = tolerated.map((s) => s.flag);
    sections.push(`${paragraph(intro)}\n  ${fill(flags, '  ', 2, 2)}`);
  }
  sections.push(`Examples:\n${info.examples.map((e) => `  ${e}`).join('\n')}`);
  if (info.notes !== undefined) sections.push(info.notes);
  return sections.join('\n\n');
}

/** `envsync --help`. */
export function rootHelp(): string {
  return `Usage: envsync <command> [flags]

Commands:
${COMMAND_NAMES.map((name) => `  ${name.padEnd(10)} ${COMMANDS[name].summary}`).join('\n')}

Flags:
  -h, --help     show this help (also: envsync <command> --help)
  -V, --version  print the version

Exit codes: 0 success, 1 error, 2 changes pending (only with --detailed-exitcode).
Every flag, variable and config file key: docs/flags.md, in the package (beside bin/envsync.js).`;
}

/** A markdown table with its columns padded to one width, as a formatter would leave it. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (text: string) =>
    text.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('\n', ' ');
  const all = [header, ...rows].map((row) => row.map(cell));
  const widths = header.map((_, i) => Math.max(3, ...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) =>
    `| ${row.map((text, i) => text.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const [head = [], ...body] = all;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

function docRow(s: Setting): string[] {
  const shown = defaultShown(s);
  const note = envNote(s);
  const tolerated = s.tolerated ?? [];
  return [
    `\`${s.flag}\`${s.parse.separator === undefined ? '' : ' (repeatable)'}`,
    s.env === undefined ? '—' : `\`${s.env}\`${note === undefined ? '' : ` (${note})`}`,
    s.file === undefined ? '—' : `\`${s.file}\` (${s.parse.words})`,
    shown === undefined ? '—' : s.defaultText === undefined ? `\`${shown}\`` : shown,
    `${s.commands.join(', ')}${tolerated.length === 0 ? '' : ` (accepted, unused: ${tolerated.join(', ')})`}`,
    s.help,
  ];
}

/** docs/flags.md: flags by command, then every setting by group (`npm run generate` writes it). */
export function flagsDoc(settings: SettingsTable): string {
  const all = Object.values(settings);
  const parts = [
    '<!-- Generated from the settings tables (src/config/settings.ts, daemon-settings.ts and the flags beside each command in src/commands/) by `npm run generate`: do not edit by hand. -->',
    '# Flags, environment variables and config file keys',
    'Every setting of every envsync command. Precedence: **flags > environment variables > config ' +
      'file > defaults**; an empty environment variable counts as unset. The config file is the ' +
      'YAML file given with `--config FILE` (or `ENVSYNC_CONFIG`); paths in it are relative to ' +
      'the file, and the token is never read from it (see `config/envsync.example.yaml`). ' +
      'Durations are written `500ms`, `30s`, `5m`, `1h`, up to `596h` (2^31-1 ms, the longest ' +
      'timer); `0` only where the flag says what it means (`--interval`, `--debounce`, ' +
      '`--shutdown-timeout`), and a timeout or delay of 0 is an error. Whole numbers are digits ' +
      'only, within the range a flag gives. A switch read from the environment or the config ' +
      'file is `true` or `false`, exactly; any other word is an error.',
    '## Flags by command',
    COMMAND_NAMES.map((command) => {
      const flags = Object.keys(GROUPS).flatMap((group) =>
        all.filter((s) => s.group === group && accepts(s, command)),
      );
      return `- \`envsync ${command}\`: ${flags.map((s) => `\`--${flagOf(s).long}\``).join(', ')}`;
    }).join('\n'),
  ];
  for (const [group, title] of Object.entries(GROUPS)) {
    const members = all.filter((s) => s.group === group);
    const header = ['Flag', 'Environment', 'Config file', 'Default', 'Commands', 'Meaning'];
    if (members.length > 0) parts.push(`## ${title}`, markdownTable(header, members.map(docRow)));
  }
  return `${parts.join('\n\n')}\n`;
}
