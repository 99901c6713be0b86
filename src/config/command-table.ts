/**
 * The flags a command reads on its own, outside the resolved settings: --config (read first, to
 * find the file), the CI outputs, saved plans, export's and --help. Part of the one settings table
 * (settings-table.ts).
 */
import { ONE_SHOT, SETTING_COMMANDS } from './commands.ts';
import { bool, oneOf, text } from './parsers.ts';
import type { SettingsTable } from './setting.ts';

export const COMMAND_SETTINGS = {
  config: {
    flag: 'config',
    short: 'c',
    type: 'string',
    value: 'FILE',
    env: { name: 'ENVSYNC_CONFIG' },
    commands: SETTING_COMMANDS,
    group: 'general',
    help: 'YAML config file (see config/envsync.example.yaml); its paths are relative to it',
    parse: text,
  },
  annotations: {
    flag: 'annotations',
    type: 'string',
    value: 'MODE',
    env: {
      name: 'GITHUB_ACTIONS',
      read: (value: string) => (value === 'true' ? 'github' : undefined),
      note: 'true gives github',
    },
    commands: ONE_SHOT,
    group: 'output',
    help: 'github: also print each problem and failure as a GitHub workflow command; none: do not',
    parse: oneOf(['github', 'none']),
    default: 'none',
  },
  summaryFile: {
    flag: 'summary-file',
    type: 'string',
    value: 'PATH',
    env: { name: 'GITHUB_STEP_SUMMARY' },
    commands: ONE_SHOT,
    group: 'output',
    help: 'append the markdown report to PATH (a GitHub step summary)',
    parse: text,
  },
  planOut: {
    flag: 'out',
    type: 'string',
    value: 'FILE',
    commands: ['plan', 'sync'],
    group: 'plan',
    help: 'save the plan, bound to the live listing it was computed from, for "envsync sync --plan FILE" (sync: with --dry-run)',
    parse: text,
  },
  dryRun: {
    flag: 'dry-run',
    type: 'boolean',
    commands: ['sync'],
    group: 'plan',
    help: 'plan only, never write (the same as "envsync plan")',
    parse: bool,
    default: false,
  },
  ignoreWindows: {
    flag: 'ignore-windows',
    type: 'boolean',
    commands: ['sync'],
    group: 'plan',
    help: 'send the changes even outside the sync windows (--sync-window); the run logs that it did',
    parse: bool,
    default: false,
  },
  planFile: {
    flag: 'plan',
    type: 'string',
    value: 'FILE',
    commands: ['sync'],
    group: 'plan',
    help: 'apply exactly the plan saved by "envsync plan --out FILE", or nothing: refused if the file was edited, does not match the manifests, or an org\'s live listing moved',
    parse: text,
  },
  exportOut: {
    flag: 'out',
    type: 'string',
    value: 'DIR',
    commands: ['export'],
    group: 'export',
    help: 'write DIR/<org>.yaml for each org',
    parse: text,
    defaultText: 'all to stdout, as YAML documents',
  },
  force: {
    flag: 'force',
    type: 'boolean',
    commands: ['export'],
    group: 'export',
    help: 'overwrite files that already exist in DIR',
    parse: bool,
    default: false,
  },
  help: {
    flag: 'help',
    short: 'h',
    type: 'boolean',
    commands: ['validate', 'plan', 'sync', 'run', 'export', 'schema', 'emulator'],
    group: 'general',
    help: 'show this help',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;
