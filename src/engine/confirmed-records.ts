import type { Logger } from 'pino';
import { confirmedRecords } from '../core/plan.ts';
import type { AppliedRecord, DesiredEnvironment } from '../core/model.ts';
import { emptyMap } from '../core/fields.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { StateStore } from '../state/store.ts';

/**
 * Gives back their fingerprint to the records of the environments a plan found as declared
 * (core/drift.ts, `confirmedRecords`), and saves them. Nothing is sent for them, so a save that
 * fails costs only that: it is logged (and shows in /status and /readyz), the records stay
 * pending for the next save, and the org goes on (its write ahead, if it sends anything, tries
 * again and holds it back if the file still cannot be written).
 */
export async function recordConfirmed(
  org: string,
  desired: readonly DesiredEnvironment[],
  unchanged: readonly string[],
  { state, logger }: { readonly state: StateStore; readonly logger: Logger },
): Promise<void> {
  const confirmed = confirmedRecords(desired, unchanged, state.lookup(org));
  if (confirmed === undefined) return;
  state.set(org, Object.assign(emptyMap<AppliedRecord>(), state.get(org), confirmed));
  logger.debug(
    { org, environments: Object.keys(confirmed) },
    `${org}: the service holds what the manifests declare; the state file records it`,
  );
  try {
    await state.save();
  } catch (error) {
    logger.error({ org, stateFile: state.file }, errorMessage(error));
  }
}
