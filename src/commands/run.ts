import { randomBytes } from 'node:crypto';
import { DAEMON_FLAG_OPTIONS, resolveDaemonSettings } from '../config/daemon-settings.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { readCaFile } from '../config/ca-file.ts';
import { resolveSettings, SETTING_FLAG_OPTIONS } from '../config/settings.ts';
import { readToken } from '../config/token.ts';
import { Daemon } from '../daemon/daemon.ts';
import { startDaemonServer } from '../daemon/http.ts';
import { startEmulator, type RunningEmulator } from '../emulator/index.ts';
import { ConfigError } from '../errors.ts';
import { createLogger, redactingStream } from '../log.ts';
import { parseFlags } from './args.ts';
import type { CommandContext } from './context.ts';

const { output: _output, 'detailed-exitcode': _detailed, ...SHARED } = SETTING_FLAG_OPTIONS;

const USAGE = `Usage: envsync run [flags]

Runs the long-running reconciler: watches the manifests (and git-sync's symlink swaps), resyncs
on an interval, serves /healthz /readyz /metrics /status and POST /reconcile.

Daemon flags:
  --interval DURATION        periodic resync, ±10% jitter; 0 turns it off (default 5m)
  --debounce DURATION        quiet time after file events before a pass (default 200ms)
  --listen HOST:PORT         HTTP endpoints (env ENVSYNC_LISTEN, default 127.0.0.1:9464)
  --shutdown-timeout DURATION  how long SIGTERM waits for the pass in flight (default 30s)
  --shard-index I            this replica's shard (with --shard-count N)
  --shard-count N            number of replicas sharing the orgs (rendezvous hashing)
  --shard-from-hostname      read the shard index from a StatefulSet pod's hostname (name-<I>)
  --emulator                 start the embedded emulator on a loopback port and reconcile
                             against it (a demo and a try-out: it is not the real service)

Shared flags:
  --manifests DIR  --api-url URL  --org ORG  --concurrency N  --retries N  --timeout DURATION
  --retry-delay DURATION  --state FILE  --token-file PATH  --ca-file PATH  --insecure-http
  --max-file-bytes N  --log-level LEVEL  -c, --config FILE  (see "envsync sync --help")

Signals: SIGHUP starts a pass; SIGTERM/SIGINT stop gracefully (exit 0).`;

/** `envsync run`: the long-running reconciler. Resolves with 0 after a graceful stop. */
export async function runCommand(ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(
    ctx.argv,
    { ...SHARED, ...DAEMON_FLAG_OPTIONS, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    ctx.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const settings = await resolveSettings(values, ctx.env, ctx.cwd);
  const daemonSettings = resolveDaemonSettings(values, ctx.env, settings.file);
  const secrets: string[] = [];
  const stderr = redactingStream(ctx.stderr, () => secrets);
  const logger = createLogger(
    settings.logLevel,
    stderr,
    { command: 'run' },
    { pretty: Boolean(ctx.stderr.isTTY) },
  );

  let emulator: RunningEmulator | undefined;
  let apiUrl: URL;
  let getToken: () => Promise<string>;
  if (daemonSettings.emulator) {
    const token = randomBytes(16).toString('hex');
    secrets.push(token);
    emulator = await startEmulator({
      host: '127.0.0.1',
      port: 0,
      tokens: [{ token, orgs: null }],
      logger: logger.child({ component: 'emulator' }, { level: 'warn' }),
    });
    apiUrl = new URL(emulator.url);
    getToken = () => Promise.resolve(token);
    logger.warn(
      { emulator: emulator.url },
      `USING THE EMBEDDED EMULATOR at ${emulator.url}: a local stand-in for the Environments API, not the real service. ` +
        `Inspect it at ${emulator.url}/_emulator/store`,
    );
  } else {
    if (settings.apiUrl === undefined) {
      throw new ConfigError(
        'no API address: pass --api-url URL or set ENVSYNC_API_URL (or --emulator to try envsync locally)',
      );
    }
    apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
    getToken = async () => {
      const token = await readToken(settings.tokenFile, ctx.env);
      if (!secrets.includes(token)) secrets.push(token);
      return token;
    };
    await getToken(); // fail fast on a missing token
  }
  const ca = await readCaFile(settings.caFile);

  const daemon = new Daemon({
    settings,
    daemon: daemonSettings,
    apiUrl,
    readToken: getToken,
    ca,
    cwd: ctx.cwd,
    logger,
  });
  const server = await startDaemonServer(daemon, daemonSettings.listen, logger);
  logger.info(
    {
      listen: server.url,
      manifests: settings.manifests,
      api: apiUrl.origin,
      intervalMs: daemonSettings.intervalMs,
      shard: daemonSettings.shard ?? null,
    },
    `envsync run: endpoints on ${server.url} (/healthz /readyz /metrics /status, POST /reconcile)`,
  );
  // Signals are handled from here on, before the first pass: a SIGTERM that arrives while the
  // daemon starts (state load, the watcher's first scan) must still stop it gracefully, not
  // kill it (the default action), and a SIGHUP must not end it either.
  let stopSignal: NodeJS.Signals | undefined;
  let wake: (() => void) | undefined;
  const onHup = () => {
    logger.info('SIGHUP: starting a pass');
    daemon.trigger('SIGHUP');
  };
  const onStop = (signal: NodeJS.Signals) => {
    process.off('SIGTERM', onStop);
    process.off('SIGINT', onStop);
    process.off('SIGHUP', onHup);
    logger.info(
      { signal },
      `${signal}: stopping (finishing the pass in flight, then writing the state)`,
    );
    stopSignal = signal;
    wake?.();
  };
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
  process.on('SIGHUP', onHup);
  try {
    await daemon.start();
  } catch (error) {
    process.off('SIGTERM', onStop);
    process.off('SIGINT', onStop);
    process.off('SIGHUP', onHup);
    await server.close();
    await emulator?.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfigError(
        `manifests directory ${settings.manifests} does not exist; pass --manifests DIR or set ENVSYNC_MANIFESTS`,
      );
    }
    throw error;
  }
  if (stopSignal === undefined) await new Promise<void>((resolve) => (wake = resolve));
  await server.close();
  await daemon.stop();
  await emulator?.close();
  logger.info('stopped');
  return 0;
}
