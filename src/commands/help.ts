/**
 * Help texts, generated from the command list and the settings table: each command's help lists
 * exactly the flags its parser accepts.
 */
import { COMMAND_NAMES, COMMANDS, type CommandName } from '../config/commands.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { GROUPS, settingsFor, type Setting, type SettingsTable } from '../config/setting.ts';
import type { CommandContext } from './context.ts';

const WIDTH = 100;
/** Where a flag's description starts. */
const COLUMN = 27;

/** Wraps `text` to WIDTH, the first line after `first` characters, the rest indented by `indent`. */
function wrap(text: string, first: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  let room = WIDTH - first;
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
      room = WIDTH - indent;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** A paragraph wrapped to WIDTH; its own line breaks are kept. */
function paragraph(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const indent = /^ */.exec(line)?.[0].length ?? 0;
      return ' '.repeat(indent) + wrap(line.slice(indent), indent, indent);
    })
    .join('\n');
}

/** Labels two spaces apart, as many on a line as fit, each line indented by two. */
function labelLines(labels: readonly string[]): string {
  const lines: string[] = [];
  for (const label of labels) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 2 + label.length <= WIDTH) {
      lines[lines.length - 1] = `${last}  ${label}`;
    } else {
      lines.push(`  ${label}`);
    }
  }
  return lines.join('\n');
}

/** `-o, --output FORMAT`. */
export function flagLabel(setting: Setting): string {
  const long = `--${setting.flag}${setting.value === undefined ? '' : ` ${setting.value}`}`;
  return setting.short === undefined ? long : `-${setting.short}, ${long}`;
}

/** The default as help and docs show it, or undefined when there is nothing to show. */
export function defaultShown(setting: Setting): string | undefined {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) {
    return undefined;
  }
  return String(value);
}

/** The help line of a setting with what the table knows: repeatable, default, variable. */
function description(setting: Setting): string {
  const shown = defaultShown(setting);
  const env = setting.env;
  return [
    setting.help,
    ...(setting.repeatable === true ? ['[repeatable]'] : []),
    ...(shown === undefined ? [] : [`[default: ${shown}]`]),
    ...(env === undefined
      ? []
      : [`[env: ${env.name}${env.note === undefined ? '' : `, ${env.note}`}]`]),
  ].join(' ');
}

function flagLine(setting: Setting): string {
  const label = `  ${flagLabel(setting)}`;
  const text = wrap(description(setting), COLUMN, COLUMN);
  return label.length < COLUMN - 1
    ? `${label.padEnd(COLUMN)}${text}`
    : `${label}\n${' '.repeat(COLUMN)}${text}`;
}

/** The help of one command: usage, description, its flags by group, examples, notes. */
export function commandHelp(command: CommandName, table: SettingsTable = SETTINGS): string {
  const info = COMMANDS[command];
  const settings = Object.values(settingsFor(table, command));
  const used = settings.filter((s) => s.commands.includes(command));
  const tolerated = settings.filter((s) => !s.commands.includes(command));
  const sections = [`Usage: ${info.synopsis}`, paragraph(info.description)];
  for (const [group, title] of Object.entries(GROUPS)) {
    // --help closes its group, wherever the table declares it.
    const members = used
      .filter((s) => s.group === group)
      .sort((a, b) => Number(a.flag === 'help') - Number(b.flag === 'help'));
    if (members.length > 0) sections.push(`${title}:\n${members.map(flagLine).join('\n')}`);
  }
  if (tolerated.length > 0) {
    const others = [...new Set(tolerated.flatMap((s) => s.commands))];
    const last = others.pop();
    const names = others.length === 0 ? last : `${others.join(', ')} and ${last}`;
    sections.push(
      `${paragraph(`Accepted but not used by ${command}, so that the same command line works for ${names}:`)}\n${labelLines(tolerated.map(flagLabel))}`,
    );
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

/** Prints a command's help on stdout; returns exit code 0. */
export function printHelp(
  ctx: CommandContext,
  command: CommandName,
  table: SettingsTable = SETTINGS,
): number {
  ctx.stdout.write(`${commandHelp(command, table)}\n`);
  return 0;
}
