/**
 * Which files below the manifests root are manifests: how large one may be, the patterns that
 * leave some out, and what becomes of a YAML file that is not a manifest. Part of the shared
 * settings (settings-table.ts), in a module of their own so that the table's file stays short.
 */
import { ONE_SHOT } from './commands.ts';
import { bool, commaSeparated, integer, texts } from './parsers.ts';
import type { SettingsTable } from './setting.ts';

export const MANIFEST_FILE_SETTINGS = {
  maxFileBytes: {
    flag: 'max-file-bytes',
    type: 'string',
    value: 'N',
    env: { name: 'ENVSYNC_MAX_FILE_BYTES' },
    file: { key: 'maxFileBytes', type: { kind: 'integer', min: 1 } },
    commands: [...ONE_SHOT, 'run'],
    group: 'manifests',
    help: 'largest manifest file read, in bytes',
    parse: integer(1, 1024 ** 3),
    default: '1048576',
  },
  exclude: {
    flag: 'exclude',
    type: 'string',
    repeatable: true,
    value: 'GLOB',
    env: { name: 'ENVSYNC_EXCLUDE', read: commaSeparated, note: 'comma-separated' },
    // Not a path relative to the config file: a pattern is matched below the manifests root.
    file: { key: 'exclude', type: { kind: 'strings' } },
    commands: [...ONE_SHOT, 'run'],
    group: 'manifests',
    help: "leave out the files and folders GLOB matches (gitignore syntax, relative to the manifests root), after the lines of the root's .envsyncignore file",
    parse: texts,
    defaultText: 'none',
  },
  strict: {
    flag: 'strict',
    type: 'boolean',
    env: { name: 'ENVSYNC_STRICT', note: 'true or false' },
    file: { key: 'strict', type: { kind: 'boolean' } },
    commands: [...ONE_SHOT, 'run'],
    group: 'manifests',
    help: 'a YAML file with neither org nor environments (a Kubernetes object, a CI file) is an error, not skipped; so is a manifests root without a manifest (run: a warning)',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;
