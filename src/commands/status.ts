/** `envsync status`: how a running daemon says its orgs stand, one line each, like `flux get`. */
import { DAEMON_SETTINGS } from '../config/daemon-settings.ts';
import { oneOf, text, texts } from '../config/parsers.ts';
import { resolveValues, type Flags } from '../config/setting.ts';
import { escapeJson, escapeText } from '../core/escape.ts';
import type { DaemonStatus } from '../daemon/status.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import type { CommandContext } from './context.ts';

const TIMEOUT_MS = 10_000;
const row = { commands: ['status'], group: 'output' } as const;

export const settings = {
  statusUrl: {
    ...row,
    flag: '--url URL',
    help: "the daemon's address",
    parse: text,
    default: `http://${DAEMON_SETTINGS.listen.default}`,
  },
  statusOrgs: { ...row, flag: '--org ORG', help: 'only this org', parse: texts },
  statusOutput: {
    ...row,
    flag: '-o, --output FORMAT',
    help: 'text or json',
    parse: oneOf(['text', 'json']),
    default: 'text',
  },
} as const;

/** Exit 0 when every org is healthy and synced, 1 when one is failing or there is no answer, else 2. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const given = resolveValues(settings, { flags, env: ctx.env });
  const url = `${given.statusUrl.replace(/\/+$/, '')}/status`;
  let status: DaemonStatus;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    status = (await response.json()) as DaemonStatus;
    if (!(status.orgs instanceof Object)) throw new Error('this is not the /status of envsync run');
  } catch (error) {
    const why = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    ctx.stderr.write(`envsync status: cannot read ${url}: ${escapeText(errorMessage(why))}\n`);
    return 1;
  }
  const only = given.statusOrgs;
  const missing = only?.filter((org) => !Object.hasOwn(status.orgs, org)) ?? [];
  if (missing.length > 0) {
    const known = Object.keys(status.orgs).join(', ') || 'none';
    throw new ConfigError(`--org: the daemon has no org ${missing.join(', ')} (it has: ${known})`);
  }
  const orgs = Object.entries(status.orgs)
    .filter(([org]) => only?.includes(org) ?? true)
    .map(([org, { health, sync, lastAttempt, lastError, state }]) => {
      const message = lastError?.message ?? state;
      return { org, health, sync, revision: status.revision, lastPass: lastAttempt, message };
    });
  if (given.statusOutput === 'json') {
    const { health, sync } = status;
    ctx.stdout.write(`${escapeJson(JSON.stringify({ health, sync, orgs }, null, 2))}\n`);
  } else {
    const lines = [['ORG', 'HEALTH', 'SYNC', 'REVISION', 'LAST PASS', 'MESSAGE']];
    for (const o of orgs)
      lines.push([o.org, o.health, o.sync, o.revision ?? '-', o.lastPass ?? 'never', o.message]);
    const width = (i: number) =>
      Math.max(...lines.map((cells) => escapeText(cells[i] ?? '').length));
    const pad = (cells: string[]) => cells.map((c, i) => escapeText(c).padEnd(width(i))).join('  ');
    ctx.stdout.write(lines.map((cells) => `${pad(cells).trimEnd()}\n`).join(''));
  }
  const failing = only === undefined && status.health.level === 'failing';
  if (failing || orgs.some((o) => o.health === 'failing')) return 1;
  return orgs.every((o) => o.health === 'healthy' && o.sync === 'synced') ? 0 : 2;
}
