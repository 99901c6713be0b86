/** Graceful-stop signals, handled from the moment `handleStopSignals` is called. */
export interface StopSignals {
  /** Resolves with the first SIGTERM or SIGINT. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** Removes the handlers (after a failure, when nothing is left to stop). */
  readonly dispose: () => void;
}

/**
 * Handles SIGTERM and SIGINT, and SIGHUP when `onHup` is given, from now on. The first stop
 * signal resolves `stopped` and removes every handler, so that a second one ends the process at
 * once. Call it before printing anything a supervisor or a test waits for: until a handler is
 * installed, a signal's default action kills the process.
 */
export function handleStopSignals(
  handlers: { onStop?: (signal: NodeJS.Signals) => void; onHup?: () => void } = {},
): StopSignals {
  const { onStop, onHup } = handlers;
  let resolve: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((done) => (resolve = done));
  const hup = () => onHup?.();
  const dispose = () => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', hup);
  };
  function stop(signal: NodeJS.Signals): void {
    dispose();
    onStop?.(signal);
    resolve(signal);
  }
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (onHup !== undefined) process.on('SIGHUP', hup);
  return { stopped, dispose };
}
