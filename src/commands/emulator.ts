/**
 * `envsync emulator`: runs the Environments API emulator until SIGTERM or SIGINT.
 * The first stdout line is exactly `listening on http://HOST:PORT`; logs go to stderr.
 */
import { printHelp } from './help.ts';
import { EMULATOR_SETTINGS } from '../config/emulator-settings.ts';
import { parseCommandFlags } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { pickSettings } from '../config/setting.ts';
import { SETTINGS } from '../config/settings-table.ts';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  startEmulator,
  type FaultSettings,
  type RunningEmulator,
} from '../emulator/index.ts';
import { UsageError, errorMessage } from '../runtime/errors.ts';
import { createLogger } from '../runtime/log.ts';
import type { CommandContext } from './context.ts';
import { logOutput } from './io.ts';
import { handleStopSignals } from './signals.ts';

const TABLE = { ...SETTINGS, ...EMULATOR_SETTINGS };
/** The one setting of the others' table the emulator reads (from its flag or variable). */
const LOG_FORMAT = pickSettings(SETTINGS, ['logFormat']);

/** `envsync emulator`. */
export async function emulatorCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(TABLE, 'emulator', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'emulator', TABLE);
  const options = resolveValues(EMULATOR_SETTINGS, { flags, env: ctx.env });
  const placeholders = new Map<string, string[]>();
  for (const [org, name] of options.placeholders) {
    placeholders.set(org, [...(placeholders.get(org) ?? []), name]);
  }
  const faults: Partial<FaultSettings> = {
    ...(options.latency === undefined ? {} : { latencyMs: options.latency }),
    ...(options.failRate === undefined ? {} : { failRate: options.failRate }),
    ...(options.resetRate === undefined ? {} : { resetRate: options.resetRate }),
    ...(options.hangRate === undefined ? {} : { hangRate: options.hangRate }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    placeholders: Object.fromEntries(placeholders),
  };
  const headersTimeoutMs = options.headersTimeoutMs;
  const requestTimeoutMs =
    options.requestTimeoutMs ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeoutMs);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new UsageError(
      `--headers-timeout: ${headersTimeoutMs} ms is longer than --request-timeout (${requestTimeoutMs} ms)`,
    );
  }

  const { logFormat } = resolveValues(LOG_FORMAT, { flags, env: ctx.env });
  const { output } = logOutput(
    ctx,
    { logLevel: options.emulatorLogLevel, logFormat },
    { oneShot: false },
  );
  // Tokens must never reach a log line, whatever a future log call passes in (createLogger
  // redacts headers and token fields).
  const logger = createLogger(
    options.emulatorLogLevel,
    ctx.stderr,
    { name: 'envsync-emulator' },
    output,
  );

  // Before the emulator logs or prints anything a supervisor or a test may wait for: from then
  // on, a signal stops it gracefully instead of killing it.
  const signals = handleStopSignals();
  let emulator: RunningEmulator;
  try {
    emulator = await startEmulator({
      host: options.host,
      port: options.port,
      orgs: options.emulatorOrgs,
      tokens: options.tokens,
      profile: options.profile,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      faults,
      ...(options.dataFile === undefined ? {} : { dataFile: options.dataFile }),
      headersTimeoutMs,
      requestTimeoutMs,
      logger,
    });
  } catch (error) {
    signals.dispose();
    throw error;
  }
  ctx.stdout.write(`listening on ${emulator.url}\n`);

  const signal = await signals.stopped;
  logger.info({ signal }, 'signal received');
  try {
    await emulator.close();
  } catch (error) {
    ctx.stderr.write(`envsync emulator: shutdown failed: ${errorMessage(error)}\n`);
    return 1;
  }
  return 0;
}
