import type { Writable } from 'node:stream';
import { fs } from './builtins.ts';

/** What a command writes to: the process's stdout or stderr (see CommandContext). */
export type Output = Writable & { isTTY?: boolean };

type Write = (this: Output, chunk: unknown, ...rest: unknown[]) => boolean;

/**
 * The process's stdout or stderr, without Node's stream object until something needs it.
 *
 * `process.stdout` on a pipe (how CI and the benchmark run envsync) is a socket: creating it loads
 * `node:net` and Node's stream modules, about 7 ms of a `validate` that prints one line. Here a
 * write to a file or a pipe goes straight to the file descriptor, whole and in order, as Node's
 * own stream writes to those on Linux. The real stream takes over for good, with every property
 * and event a stream has, as soon as anything but `write` and `isTTY` is asked for, for a
 * terminal, and for the rest of a write the descriptor does not take (a full non-blocking pipe, a
 * reader that went away, a closed descriptor): it then waits, retries and reports errors exactly
 * as it always has.
 */
export function lazyOutput(fd: number, real: () => Output): Output {
  let stream: Output | undefined;
  const take = (): Output => (stream ??= real());
  const viaStream = (chunk: unknown, rest: readonly unknown[]): boolean => {
    const target = take();
    return (target.write as Write).call(target, chunk, ...rest);
  };
  // A terminal is a character device. So are a few other files (/dev/null): the real stream tells
  // those apart, and only a character device pays for it.
  let characterDevice: boolean | undefined;
  const maybeTerminal = (): boolean => {
    if (characterDevice === undefined) {
      try {
        characterDevice = fs().fstatSync(fd).isCharacterDevice();
      } catch {
        characterDevice = true; // not a descriptor fstat can read: the real stream decides
      }
    }
    return characterDevice;
  };
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    if (
      stream !== undefined ||
      maybeTerminal() ||
      !(typeof chunk === 'string' || chunk instanceof Uint8Array)
    ) {
      return viaStream(chunk, rest);
    }
    const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8';
    const done = rest.find((arg) => typeof arg === 'function');
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += fs().writeSync(fd, bytes, offset, bytes.length - offset);
      } catch {
        return viaStream(bytes.subarray(offset), done === undefined ? [] : [done]);
      }
    }
    if (done !== undefined) process.nextTick(done);
    return true;
  };
  return new Proxy({} as Output, {
    get(_target, property) {
      if (property === 'write') return write;
      if (property === 'isTTY' && stream === undefined && !maybeTerminal()) return false;
      const target = take();
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
    set(_target, property, value) {
      return Reflect.set(take(), property, value);
    },
    has(_target, property) {
      return property === 'write' || property === 'isTTY' || Reflect.has(take(), property);
    },
    getPrototypeOf() {
      return Reflect.getPrototypeOf(take());
    },
  });
}
