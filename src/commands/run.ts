import { startEmulator } from '../emulator/index.ts';
import { printHelp } from './help.ts';
import path from 'node:path';
import { parseApiUrl } from '../config/api-url.ts';
import { readCaFile } from '../config/ca-file.ts';
import { resolveDaemonSettings } from '../config/daemon-settings.ts';
import { formatDuration } from '../config/duration.ts';
import { parseCommandFlags } from '../config/flags.ts';
import { isGiven } from '../config/resolve.ts';
import { resolveSettings } from '../config/settings.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { readTokens } from '../config/token-dir.ts';
import { oneToken, tokensOf, type TokenSet } from '../config/org-tokens.ts';
import { Daemon } from '../daemon/daemon.ts';
import { readWebhookSecret, startDaemonServer } from '../daemon/http.ts';
import type { RunningEmulator } from '../emulator/index.ts';
import { ConfigError } from '../runtime/errors.ts';
import type { CommandContext } from './context.ts';
import { commandIo } from './io.ts';
import { handleStopSignals } from './signals.ts';
import { MIN_STOP_MS, stopBudget } from '../daemon/shutdown.ts';
import { tuneV8ForWork } from '../runtime/v8-flags.ts';
import * as crypto from 'node:crypto';
import * as fsPromises from 'node:fs/promises';

/** The state file of `run --emulator` when no state file is named (see docs/output.md). */
export const EMULATOR_STATE = '.envsync/emulator-state.json';

/** The limit of a stop as its message says it: `30s (--shutdown-timeout)`. */
function stopLimitText(shutdownTimeoutMs: number): string {
  const { hardMs } = stopBudget(shutdownTimeoutMs);
  return hardMs === shutdownTimeoutMs
    ? `${formatDuration(hardMs)} (--shutdown-timeout)`
    : `${formatDuration(hardMs)} (--shutdown-timeout ${formatDuration(shutdownTimeoutMs)}, ${formatDuration(MIN_STOP_MS)} at the least)`;
}

/** `envsync run`: the long-running reconciler. Resolves with 0 after a graceful stop. */
export async function runCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'run', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'run');
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const daemonSettings = resolveDaemonSettings(
    flags,
    ctx.env,
    resolved.file,
    undefined,
    resolved.fileDir,
  );
  // The embedded emulator starts empty on a new port each time: its state file is its own
  // (never the real API's) and starts empty with it, unless a state file is named.
  const ownState =
    daemonSettings.emulator &&
    !isGiven(SETTINGS.state, { flags, env: ctx.env, file: resolved.file });
  const settings = ownState ? { ...resolved, state: EMULATOR_STATE } : resolved;
  const io = commandIo(ctx, settings, 'run');
  const { logger } = io;

  // Signals are handled before anything is logged: a SIGTERM that arrives while the daemon
  // starts (or right after its first log line) must stop it gracefully, not kill it (the
  // default action), and a SIGHUP must not end it either. A SIGHUP before the daemon runs is
  // kept for when it does.
  let daemon: Daemon | undefined;
  let hupPending = false;
  const signals = handleStopSignals({
    onStop: (signal) =>
      logger.info(
        { signal },
        `${signal}: stopping (finishing the pass in flight, then writing the state)`,
      ),
    // Whatever the stop waits on, it ends within --shutdown-timeout (daemon/shutdown.ts).
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
      io.secrets.add(token);
      emulator = await startEmulator({
        host: '127.0.0.1',
        port: 0,
        tokens: [{ token, orgs: null }],
        // Its warnings are about the emulator command's flags (no --org: every org exists),
        // which this one has not; its errors still show.
        logger: logger.child({ component: 'emulator' }, { level: 'error' }),
      });
      apiUrl = new URL(emulator.url);
      getTokens = () => Promise.resolve(oneToken(token, 'emulator'));
      logger.warn(
        { emulator: emulator.url },
        `USING THE EMBEDDED EMULATOR at ${emulator.url}: a local stand-in for the Environments API, not the real service. ` +
          `See its store at ${emulator.url}/_emulator/`,
      );
    } else {
      if (settings.apiUrl === undefined) {
        throw new ConfigError(
          'no API address: pass --api-url URL or set ENVSYNC_API_URL (or --emulator to try envsync locally)',
        );
      }
      apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
      // Each pass reads them again, within its own --deadline: every token read is masked in
      // every output from then on (the daemon adds each to `secrets`).
      getTokens = () => readTokens(settings, ctx.env, ctx.cwd, { timeoutMs: settings.deadlineMs });
      // Fail fast on a missing token or token directory (with --token-dir, the default token is
      // optional: an org with neither fails on its own, at each pass).
      for (const token of tokensOf(await getTokens())) io.secrets.add(token);
    }
    const ca = await readCaFile(settings.caFile, ctx.cwd, settings.deadlineMs);
    const webhookSecret =
      daemonSettings.webhookSecretFile === undefined
        ? undefined
        : // A relative path starts where the command was run, as every other file's does.
          await readWebhookSecret(
            path.resolve(ctx.cwd, daemonSettings.webhookSecretFile),
            settings.deadlineMs,
          );
    if (webhookSecret !== undefined) io.secrets.add(webhookSecret);
    running = new Daemon({
      settings,
      daemon: daemonSettings,
      apiUrl,
      readTokens: getTokens,
      ca,
      cwd: ctx.cwd,
      logger,
      secrets: io.secrets,
    });
    server = await startDaemonServer(running, daemonSettings.listen, logger, { webhookSecret });
    logger.info(
      {
        listen: server.url,
        manifests: settings.manifests,
        api: apiUrl.origin,
        intervalMs: daemonSettings.intervalMs,
        shard: daemonSettings.shard ?? null,
      },
      `envsync run: listening on ${server.url}: the status page at ${server.url}/, and /healthz /readyz /metrics /status, POST /reconcile`,
    );
    tuneV8ForWork(); // before the first pass reads the manifests
    await startDaemon(running, settings.manifests);
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

/** Starts the daemon, turning a missing manifests root into a clear configuration error. */
async function startDaemon(daemon: Daemon, manifests: string): Promise<void> {
  try {
    await daemon.start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfigError(
        `manifests directory ${manifests} does not exist; pass --manifests DIR or set ENVSYNC_MANIFESTS`,
      );
    }
    throw error;
  }
}
