import * as crypto from 'node:crypto';
import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import { parseApiUrl } from '../config/api-url.ts';
import { DAEMON_SETTINGS, resolveDaemonSettings } from '../config/daemon-settings.ts';
import { formatDuration } from '../config/duration.ts';
import { isGiven, type Flags } from '../config/setting.ts';
import { resolveSettings, SETTINGS } from '../config/settings.ts';
import { oneToken, readTokens, tokensOf, type TokenSet } from '../config/tokens.ts';
import { Daemon } from '../daemon/daemon.ts';
import { readWebhookSecret, startDaemonServer } from '../daemon/http.ts';
import { MIN_STOP_MS, stopBudget } from '../daemon/shutdown.ts';
import { startEmulator, type RunningEmulator } from '../emulator/index.ts';
import { ConfigError } from '../runtime/errors.ts';
import { tuneV8ForWork } from '../runtime/v8-flags.ts';
import { readCaFile } from './connect.ts';
import { commandLogger, type CommandContext } from './context.ts';
import { rootError } from './manifests.ts';
import { handleStopSignals } from './signals.ts';

export const settings = DAEMON_SETTINGS;

/** The state file of `run --emulator` when no state file is named (see docs/output.md). */
const EMULATOR_STATE = '.envsync/emulator-state.json';

/** The limit of a stop as its message says it: `30s (--shutdown-timeout)`. */
function stopLimitText(shutdownTimeoutMs: number): string {
  const { hardMs } = stopBudget(shutdownTimeoutMs);
  return hardMs === shutdownTimeoutMs
    ? `${formatDuration(hardMs)} (--shutdown-timeout)`
    : `${formatDuration(hardMs)} (--shutdown-timeout ${formatDuration(shutdownTimeoutMs)}, ${formatDuration(MIN_STOP_MS)} at the least)`;
}

/** `envsync run`: the long-running reconciler. Resolves with 0 after a graceful stop. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const given = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { file, fileDir } = given;
  const daemonSettings = resolveDaemonSettings(flags, ctx.env, file, undefined, fileDir);
  // The embedded emulator starts empty on a new port each time: its state file is its own
  // (never the real API's) and starts empty with it, unless a state file is named.
  const ownState =
    daemonSettings.emulator && !isGiven(SETTINGS.state, { flags, env: ctx.env, file });
  const resolved = ownState ? { ...given, state: EMULATOR_STATE } : given;
  const logger = commandLogger(ctx, resolved, 'run');

  // Signals are handled before anything is logged: a SIGTERM while the daemon starts stops it
  // gracefully, and a SIGHUP before it runs is kept for when it does.
  let daemon: Daemon | undefined;
  let hupPending = false;
  const signals = handleStopSignals({
    onStop: (signal) =>
      logger.info(
        { signal },
        `${signal}: stopping (finishing the pass in flight, then writing the state)`,
      ),
    hardStop: {
      afterMs: stopBudget(daemonSettings.shutdownTimeoutMs).hardMs,
      onForced: () =>
        logger.error(
          { shutdownTimeoutMs: daemonSettings.shutdownTimeoutMs },
          `the stop did not end within ${stopLimitText(daemonSettings.shutdownTimeoutMs)}: ` +
            'exiting now, with code 1; something did not answer (a file system, the state file lock held by another writer), and the last state may not be written',
        ),
    },
    onHup: () => {
      logger.info('SIGHUP: starting a pass');
      if (daemon === undefined) hupPending = true;
      else daemon.trigger('SIGHUP');
    },
  });

  let emulator: RunningEmulator | undefined;
  let server: Awaited<ReturnType<typeof startDaemonServer>> | undefined;
  let running: Daemon;
  try {
    let apiUrl: URL;
    let getTokens: () => Promise<TokenSet>;
    if (daemonSettings.emulator) {
      if (ownState) await fsPromises.rm(path.resolve(ctx.cwd, EMULATOR_STATE), { force: true });
      const token = crypto.randomBytes(16).toString('hex');
      ctx.secrets.add(token);
      emulator = await startEmulator({
        host: '127.0.0.1',
        port: 0,
        tokens: [{ token, orgs: null }],
        profile: daemonSettings.emulatorProfile === 'kosli' ? 'kosli' : 'spec',
        // Its warnings are about the emulator command's flags, which this one has not.
        logger: logger.child({ component: 'emulator' }, { level: 'error' }),
      });
      apiUrl = new URL(emulator.url);
      getTokens = () => Promise.resolve(oneToken(token, 'emulator'));
      logger.warn(
        { emulator: emulator.url, profile: daemonSettings.emulatorProfile },
        `USING THE EMBEDDED EMULATOR at ${emulator.url}: a local stand-in for the Environments API, not the real service. ` +
          `See its store at ${emulator.url}/_emulator/`,
      );
    } else {
      if (resolved.apiUrl === undefined) {
        throw new ConfigError(
          'no API address: pass --api-url URL or set ENVSYNC_API_URL (or --emulator to try envsync locally)',
        );
      }
      apiUrl = parseApiUrl(resolved.apiUrl, { insecureHttp: resolved.insecureHttp });
      // Each pass reads them again (the daemon adds each to `secrets`).
      getTokens = () => readTokens(resolved, ctx.env, ctx.cwd, { timeoutMs: resolved.deadlineMs });
      // Fail fast on a missing token or token directory.
      for (const token of tokensOf(await getTokens())) ctx.secrets.add(token);
    }
    const ca = await readCaFile(resolved.caFile, ctx.cwd, resolved.deadlineMs);
    const secretFile = daemonSettings.webhookSecretFile;
    const webhookSecret =
      secretFile === undefined
        ? undefined
        : await readWebhookSecret(path.resolve(ctx.cwd, secretFile), resolved.deadlineMs);
    if (webhookSecret !== undefined) ctx.secrets.add(webhookSecret);
    running = new Daemon({
      settings: resolved,
      daemon: daemonSettings,
      apiUrl,
      readTokens: getTokens,
      ca,
      cwd: ctx.cwd,
      logger,
      secrets: ctx.secrets,
    });
    server = await startDaemonServer(running, daemonSettings.listen, logger, { webhookSecret });
    logger.info(
      {
        listen: server.url,
        manifests: resolved.manifests,
        api: apiUrl.origin,
        intervalMs: daemonSettings.intervalMs,
        shard: daemonSettings.shard ?? null,
      },
      `envsync run: listening on ${server.url}: the status page at ${server.url}/, and /healthz /readyz /metrics /status, POST /reconcile`,
    );
    tuneV8ForWork(); // before the first pass reads the manifests
    await running.start().catch((error: unknown) => {
      throw rootError(error, resolved.manifests);
    });
  } catch (error) {
    signals.dispose();
    await server?.close();
    await emulator?.close();
    throw error;
  }
  daemon = running;
  if (hupPending) daemon.trigger('SIGHUP');

  await signals.stopped;
  await server.close();
  await daemon.stop();
  await emulator?.close();
  logger.info('stopped');
  return 0;
}
