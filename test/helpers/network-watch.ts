import dns from 'node:dns';
import net from 'node:net';

/** A host that stays on this machine. */
function loopback(host: string | undefined): boolean {
  return host === undefined || host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/**
 * Runs `work` (a CLI run in this process) with every socket connect and DNS lookup recorded, as
 * `connect HOST:PORT` and `lookup HOST`, in order; with `offMachine: 'block'`, one that would leave
 * the machine fails at once (a lookup with ENOTFOUND) after it is recorded. It wraps
 * `net.Socket.prototype.connect` and `dns.lookup` (undici's sockets go through them) until `work`
 * ends; a worker runs one test at a time, so anything else would add calls and fail the test.
 */
export async function watchNetwork<T>(
  work: () => Promise<T>,
  { offMachine = 'allow' }: { offMachine?: 'allow' | 'block' } = {},
): Promise<{ result: T; calls: string[] }> {
  const calls: string[] = [];
  const block = offMachine === 'block';
  // Kept as descriptors, to be put back as they were.
  const connect = Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect');
  const lookup = Object.getOwnPropertyDescriptor(dns, 'lookup');
  if (connect === undefined || lookup === undefined) throw new Error('net or dns changed shape');
  const connectSocket = connect.value as (this: net.Socket, ...args: unknown[]) => net.Socket;
  const lookUp = lookup.value as (...args: unknown[]) => unknown;
  Object.defineProperty(net.Socket.prototype, 'connect', {
    ...connect,
    value(this: net.Socket, ...args: unknown[]) {
      // net.connect() passes its normalized arguments as one array.
      const first: unknown = Array.isArray(args[0]) ? args[0][0] : args[0];
      const options =
        typeof first === 'object' && first !== null
          ? (first as { host?: string; port?: number })
          : { port: first as number, host: args[1] as string | undefined };
      calls.push(`connect ${options.host}:${options.port}`);
      if (block && !loopback(options.host)) {
        process.nextTick(() => this.destroy(new Error('blocked by the test guard')));
        return this;
      }
      return connectSocket.apply(this, args);
    },
  });
  Object.defineProperty(dns, 'lookup', {
    ...lookup,
    value(host: string, ...rest: unknown[]) {
      calls.push(`lookup ${host}`);
      if (block && !loopback(host)) {
        const callback = rest.at(-1) as (error: Error) => void;
        const error = Object.assign(new Error('blocked by the test guard'), { code: 'ENOTFOUND' });
        process.nextTick(() => callback(error));
        return {};
      }
      return lookUp.call(dns, host, ...rest);
    },
  });
  try {
    const result = await work();
    return { result, calls };
  } finally {
    Object.defineProperty(net.Socket.prototype, 'connect', connect);
    Object.defineProperty(dns, 'lookup', lookup);
  }
}
