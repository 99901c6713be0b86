/**
 * One transport for the daemon's life: against a rate-limited emulator, the first pass meets the
 * limit (a burst of 429s, then the shared gate paces to the admitted rate), and the second pass
 * starts at the pace it learned, with no new burst of 429s.
 *
 * The burst must not depend on the machine's speed: the limit (4 a second, a bucket of 4) is below
 * what the daemon asks for at once (8 requests in flight), and a pass sends 14 requests, more than
 * the bucket and its refill give in the seconds even a slow machine takes. A client made afresh
 * meets the limit so on every pass; the kept gate does not.
 */
import { describe, expect, it } from 'vitest';
import { passNow, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const ENVIRONMENTS = 12;
/** The 429s the kept gate may meet in a pass as it probes for a faster pace. */
const PROBES = 2;
const world = useDaemonWorld([{ token: 'transport-test-token-9a41c7e2', orgs: null }]);

const manifest = (description: string) =>
  `org: acme\nenvironments:\n${Array.from(
    { length: ENVIRONMENTS },
    (_, i) => `  - name: env-${i}\n    type: K8S\n    description: ${description} ${i}\n`,
  ).join('')}`;

describe('the daemon keeps its connections and its gate between passes', () => {
  it('starts the second pass at the pace the first one learned: no new 429 burst', async () => {
    await world.api.setFaults({ rateLimit: 4 });
    await world.tmp.write('manifests/acme.yaml', manifest('first'));
    const d = await world.start({ flags: { concurrency: '8' } });
    await waitFor('the first pass', () => d.passes() > 0, { timeoutMs: 60_000 });
    await d.daemon.idle();
    const throttled = async () => (await world.api.getStats()).byStatus['429'] ?? 0;
    // A listing, the creates, a listing to verify: the first requests in flight meet the limit.
    const first = await throttled();
    expect(first).toBeGreaterThan(PROBES);
    expect(d.daemon.status().orgs['acme']?.pending).toBe(0);

    await world.tmp.write('manifests/acme.yaml', manifest('second'));
    await passNow(d);
    const store = (await world.api.getStore()).orgs['acme'] ?? [];
    expect(store.filter((e) => e.description.startsWith('second'))).toHaveLength(ENVIRONMENTS);
    // The same requests again, from the pace learned: at most the probes, no burst.
    expect((await throttled()) - first).toBeLessThanOrEqual(PROBES);
  });
});
