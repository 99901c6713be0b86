import type { Logger } from 'pino';

/** A phase mark: logs what was reached, with time, CPU and memory so far. */
export type Phase = (what: string, fields?: () => Record<string, unknown>) => void;

/**
 * Phase timings at debug level: where a slow run spends its time (see docs/performance.md).
 * Nothing is measured or built unless debug is on.
 */
export function phaseTimer(logger: Logger): Phase {
  return (what, fields = () => ({})) => {
    if (!logger.isLevelEnabled('debug')) return;
    const { user, system } = process.cpuUsage();
    logger.debug(
      {
        ...fields(),
        atMs: Math.round(performance.now()),
        cpuMs: Math.round((user + system) / 1000),
        rssMb: Math.round(process.memoryUsage.rss() / 1e6),
      },
      what,
    );
  };
}
