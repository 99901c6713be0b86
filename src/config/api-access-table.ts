/**
 * How envsync gets to the API: the tokens (one for every org, or one per org from a directory),
 * plain http and extra CA certificates. Part of the shared settings (settings-table.ts), in a
 * module of their own so that the table's file stays short.
 */
import { API, VALIDATE } from './commands.ts';
import { bool, text } from './parsers.ts';
import type { SettingsTable } from './setting.ts';

export const API_ACCESS_SETTINGS = {
  tokenFile: {
    flag: 'token-file',
    type: 'string',
    value: 'PATH',
    env: { name: 'ENVSYNC_TOKEN_FILE' },
    file: { key: 'tokenFile', type: { kind: 'string' }, relative: true },
    commands: API,
    tolerated: VALIDATE,
    group: 'api',
    help: 'read the token from PATH, before every pass (a rotated Secret is picked up); without it, ENVSYNC_TOKEN; with --token-dir, the token of the orgs with no file there',
    parse: text,
  },
  tokenDir: {
    flag: 'token-dir',
    type: 'string',
    value: 'DIR',
    env: { name: 'ENVSYNC_TOKEN_DIR' },
    file: { key: 'tokenDir', type: { kind: 'string' }, relative: true },
    commands: API,
    tolerated: VALIDATE,
    group: 'api',
    help: 'a token per org: the file named after the org in DIR holds its token (a Kubernetes Secret with one key per org, mounted whole), read before every pass; an org with no file uses --token-file or ENVSYNC_TOKEN, and fails without one',
    parse: text,
  },
  insecureHttp: {
    flag: 'insecure-http',
    type: 'boolean',
    env: { name: 'ENVSYNC_INSECURE_HTTP', note: 'true or false' },
    file: { key: 'insecureHttp', type: { kind: 'boolean' } },
    commands: API,
    tolerated: VALIDATE,
    group: 'api',
    help: 'allow plain http:// to a non-loopback host (the token would travel in clear text)',
    parse: bool,
    default: false,
  },
  caFile: {
    flag: 'ca-file',
    type: 'string',
    value: 'PATH',
    env: { name: 'ENVSYNC_CA_FILE' },
    file: { key: 'caFile', type: { kind: 'string' }, relative: true },
    commands: API,
    tolerated: VALIDATE,
    group: 'api',
    help: 'extra CA certificates (PEM) to trust for https',
    parse: text,
  },
} as const satisfies SettingsTable;
