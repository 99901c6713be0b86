/**
 * docs/flags.md, generated from the settings table: `npm run generate` writes it with the other
 * generated files (`npm run docs:flags` writes it alone), and a test fails when the committed file
 * differs.
 */
import { COMMAND_NAMES } from '../config/commands.ts';
import {
  accepts,
  GROUPS,
  type FileType,
  type Setting,
  type SettingsTable,
} from '../config/setting.ts';
import { defaultShown, flagLabel } from './help.ts';

/** The command that writes the file (the test's failure message quotes it). */
export const REGENERATE = 'npm run generate';

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('\n', ' ');
}

/** A setting's default for the docs: the value as typed, or the table's words for it. */
function defaultCell(setting: Setting): string {
  const shown = defaultShown(setting);
  if (shown === undefined) return '—';
  return setting.defaultText === undefined ? `\`${shown}\`` : shown;
}

/** A markdown table with its columns padded to one width, as a formatter would leave it. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map(cell));
  const widths = header.map((_, i) => Math.max(3, ...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) =>
    `| ${row.map((text, i) => text.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const [head = [], ...body] = all;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

const FILE_TYPES: Record<FileType['kind'], string> = {
  string: 'text',
  strings: 'list of texts',
  boolean: 'true or false',
  duration: 'duration',
  integer: 'whole number',
  enum: 'one of the values',
};

function fileCell(setting: Setting): string {
  const file = setting.file;
  if (file === undefined) return '—';
  const notes = [
    FILE_TYPES[file.type.kind],
    ...(file.relative === true ? ['relative to the file'] : []),
  ];
  return `\`${file.key}\` (${notes.join(', ')})`;
}

function envCell(setting: Setting): string {
  const env = setting.env;
  if (env === undefined) return '—';
  return `\`${env.name}\`${env.note === undefined ? '' : ` (${env.note})`}`;
}

function commandsCell(setting: Setting): string {
  const tolerated = setting.tolerated ?? [];
  const used = setting.commands.join(', ');
  return tolerated.length === 0 ? used : `${used} (accepted, unused: ${tolerated.join(', ')})`;
}

/** The whole reference: flags by command, then every setting by group. */
export function flagsDoc(settings: SettingsTable): string {
  const all = Object.values(settings);
  const parts = [
    `<!-- Generated from the settings table (src/config/settings-table.ts, daemon-table.ts and emulator-settings.ts) by \`${REGENERATE}\`: do not edit by hand. -->`,
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
      return `- \`envsync ${command}\`: ${flags.map((s) => `\`--${s.flag}\``).join(', ')}`;
    }).join('\n'),
  ];
  for (const [group, title] of Object.entries(GROUPS)) {
    const members = all.filter((s) => s.group === group);
    if (members.length === 0) continue;
    parts.push(
      `## ${title}`,
      table(
        ['Flag', 'Environment', 'Config file', 'Default', 'Commands', 'Meaning'],
        members.map((s) => [
          `\`${flagLabel(s)}\`${s.repeatable === true ? ' (repeatable)' : ''}`,
          envCell(s),
          fileCell(s),
          defaultCell(s),
          commandsCell(s),
          s.help,
        ]),
      ),
    );
  }
  return `${parts.join('\n\n')}\n`;
}
