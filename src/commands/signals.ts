/** Ends the process: once stderr has taken what was written (or a second later, if it cannot). */
function exitNow(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 1000);
  process.stderr.write('', () => process.exit(code));
}

/**
 * Handles SIGTERM and SIGINT, and SIGHUP when `onHup` is given, from now on: call it before
 * printing anything a supervisor waits for. The first stop signal resolves `stopped` and removes
 * every handler (as `dispose` does), so that a second one ends the process at once. With
 * `hardStop`, the process exits 1 `afterMs` after it, whatever it waits on (an unref'd timer).
 */
export function handleStopSignals(
  handlers: {
    onStop?: (signal: NodeJS.Signals) => void;
    onHup?: () => void;
    hardStop?: { readonly afterMs: number; readonly onForced: () => void };
  } = {},
): { stopped: Promise<NodeJS.Signals>; dispose: () => void } {
  const { onStop, onHup, hardStop } = handlers;
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
    if (hardStop !== undefined) {
      setTimeout(() => {
        hardStop.onForced();
        exitNow(1);
      }, hardStop.afterMs).unref();
    }
    resolve(signal);
  }
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (onHup !== undefined) process.on('SIGHUP', hup);
  return { stopped, dispose };
}
