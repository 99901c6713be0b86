/** `envsync status`: how a running daemon says its orgs stand, one line each, like `flux get`. */
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
    help: "the daemon's address (its --listen)",
    parse: text,
    default: 'http://127.0.0.1:9464',
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

/** Exit 0 when every org is healthy and synced, 1 when one is failing or the daemon is not reached, else 2. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const { statusUrl, statusOrgs, statusOutput } = resolveValues(settings, { flags, env: ctx.env });
  const url = `${statusUrl.replace(/\/+$/, '')}/status`;
  let status: DaemonStatus;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    status = (await response.json()) as DaemonStatus;
  } catch (error) {
    const cause =
      error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : '';
    ctx.stderr.write(
      `envsync status: cannot read ${url}: ${escapeText(errorMessage(error) + cause)}\n`,
    );
    return 1;
  }
  const missing = statusOrgs?.filter((org) => !Object.hasOwn(status.orgs, org)) ?? [];
  if (missing.length > 0) {
    const known = Object.keys(status.orgs).join(', ') || 'none';
    throw new ConfigError(`--org: the daemon has no org ${missing.join(', ')} (it has: ${known})`);
  }
  const orgs = Object.entries(status.orgs)
    .filter(([org]) => statusOrgs?.includes(org) ?? true)
    .map(([org, { health, sync, lastAttempt, lastError, state }]) => {
      const message = lastError?.message ?? state;
      return { org, health, sync, revision: status.revision, lastPass: lastAttempt, message };
    });
  if (statusOutput === 'json') {
    const { health, sync } = status;
    ctx.stdout.write(`${escapeJson(JSON.stringify({ health, sync, orgs }, null, 2))}\n`);
  } else {
    const lines = [
      ['ORG', 'HEALTH', 'SYNC', 'REVISION', 'LAST PASS', 'MESSAGE'],
      ...orgs.map((o) => [
        o.org,
        o.health,
        o.sync,
        o.revision ?? '-',
        o.lastPass ?? 'never',
        o.message,
      ]),
    ].map((cells) => cells.map(escapeText));
    const widths = lines[0]?.map((_, i) =>
      Math.max(...lines.map((cells) => cells[i]?.length ?? 0)),
    );
    const padded = lines.map((cells) => cells.map((c, i) => c.padEnd(widths?.[i] ?? 0)));
    ctx.stdout.write(padded.map((cells) => `${cells.join('  ').trimEnd()}\n`).join(''));
  }
  const failing = statusOrgs === undefined && status.health.level === 'failing';
  if (failing || orgs.some((o) => o.health === 'failing')) return 1;
  return orgs.every((o) => o.health === 'healthy' && o.sync === 'synced') ? 0 : 2;
}
