import type { Logger } from 'pino';
import { clientFromSettings, type Transport } from '../api/client.ts';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import type { Mask } from '../core/mask.ts';
import type { OrgReport, RunReport } from '../core/report.ts';
import { reconcile } from '../engine/reconcile.ts';
import type { StateStore } from '../state/store.ts';
import type { ManifestSet } from '../manifests/load.ts';
import type { DaemonMetrics } from './metrics.ts';
import type { PassTokens } from './pass-org.ts';
import type { Shutdown } from './shutdown.ts';

/**
 * One run of the engine (the same as `envsync sync`) over the orgs of `manifests`, with a client
 * for this pass that the daemon's shutdown can cut short, and the metrics told of every request.
 */
export async function runEngine(options: {
  readonly settings: Settings;
  readonly apiUrl: URL;
  readonly ca: string | undefined;
  /** The pass's tokens: each org's requests carry its own. */
  readonly tokens: PassTokens;
  /** Masks the service's text before it is cut for a message (the client's). */
  readonly mask: Mask;
  readonly manifests: ManifestSet;
  /** The git-sync revision of the manifests, when known: policy document uploads name it. */
  readonly revision: string | undefined;
  readonly state: StateStore;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly shutdown: Shutdown;
  readonly metrics: DaemonMetrics;
  /** Plan only, send nothing (observe mode, outside the sync windows). */
  readonly dryRun: boolean;
  /** The daemon's connections and gate, shared by every pass. */
  readonly transport: Transport;
  /** An org's round failed and another follows. */
  readonly onRoundFailed: (report: OrgReport) => void;
  /** An org is done. */
  readonly onOrgDone: (report: OrgReport) => void;
}): Promise<RunReport> {
  const { shutdown, logger } = options;
  const client = clientFromSettings(options.settings, {
    apiUrl: options.apiUrl,
    getToken: options.tokens.getToken,
    mask: options.mask,
    logger,
    ca: options.ca,
    signal: shutdown.abort,
    stop: shutdown.stopping,
    events: shutdown.events(options.metrics.clientEvents()),
    clock: options.clock,
    transport: options.transport,
  });
  try {
    return await reconcile({
      manifests: options.manifests,
      client,
      state: options.state,
      logger,
      dryRun: options.dryRun,
      revision: options.revision,
      maxArchive: options.settings.maxArchive,
      signal: shutdown.stopping,
      onRoundFailed: options.onRoundFailed,
      onOrgDone: options.onOrgDone,
    });
  } finally {
    await client.close();
  }
}
