/**
 * The CLI's stdout and stderr (src/runtime/stdio.ts) write straight to the file descriptor until Node's
 * stream is needed. Each case runs a real child process that writes through them, into a real
 * file or FIFO, and checks that every byte arrives, in order, and that the stream takes over
 * where it must.
 */
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, constants, createReadStream, openSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const STDIO = new URL('../../src/runtime/stdio.ts', import.meta.url).href;

/** A line of text numbered `n`, so that a lost, doubled or reordered piece shows. */
const line = (n: number) => `line ${String(n).padStart(7, '0')} ${'x'.repeat(48)}\n`;
const lines = (from: number, to: number) => {
  let text = '';
  for (let n = from; n < to; n++) text += line(n);
  return text;
};

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(() => tmp.cleanup());

/** Runs `body` in a child whose stdout is `stdout`; its stderr is collected. */
function child(body: string, stdout: number | 'ignore') {
  const script = `
import { lazyOutput } from ${JSON.stringify(STDIO)};
const { writeSync } = process.getBuiltinModule('node:fs');
const out = lazyOutput(1, () => process.stdout);
const line = ${line.toString()};
const lines = ${lines.toString()};
const report = (what) => writeSync(2, JSON.stringify(what) + '\\n');
const streamLoaded = () => process.moduleLoadList.includes('NativeModule internal/streams/writable');
${body}
`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', stdout, 'pipe'],
  });
  let stderr = '';
  (proc.stderr as NodeJS.ReadableStream)
    .setEncoding('utf8')
    .on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => proc.once('close', resolve));
  const reports = () =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { exited, reports, stderr: () => stderr };
}

describe('lazyOutput', () => {
  it('into a file: direct writes, then the stream once something else is asked, all in order', async () => {
    const file = tmp.path('out.txt');
    const fd = openSync(file, 'w');
    const run = child(
      `
out.write(lines(0, 1000));
out.write(Buffer.from(lines(1000, 2000)), () => report({ callback: true }));
report({ isTTY: out.isTTY, streamBefore: streamLoaded() });
void out.writableLength; // anything but write and isTTY: the real stream takes over
const streamAfter = streamLoaded();
const { Writable } = process.getBuiltinModule('node:stream');
report({ streamAfter, writable: out instanceof Writable, hasEnd: 'end' in out });
out.write(lines(2000, 3000));
`,
      fd,
    );
    closeSync(fd);
    expect(await run.exited, run.stderr()).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(lines(0, 3000));
    expect(run.reports()).toEqual([
      { isTTY: false, streamBefore: false },
      { streamAfter: true, writable: true, hasEnd: true },
      { callback: true },
    ]);
  });

  it('into a full non-blocking pipe: the stream waits for the reader, nothing is lost', async () => {
    const fifo = tmp.path('fifo');
    execFileSync('mkfifo', [fifo]);
    // A reader end that never reads, so that the child's open for writing succeeds at once. The
    // child opens its own non-blocking writer end (a spawned child's stdout is always blocking):
    // its writes fail with EAGAIN once the pipe is full, and the stream is then a socket on it,
    // as process.stdout is on a pipe.
    const idle = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const run = child(
      `
const { openSync, constants } = process.getBuiltinModule('node:fs');
const fd = openSync(${JSON.stringify(fifo)}, constants.O_WRONLY | constants.O_NONBLOCK);
const socket = () => {
  const { Socket } = process.getBuiltinModule('node:net');
  return new Socket({ fd, readable: false, writable: true });
};
const pipe = lazyOutput(fd, socket);
pipe.write(line(0));
const before = streamLoaded();
pipe.write(lines(1, 60000)); // about 3.5 MB, far more than a pipe holds
report({ before, after: streamLoaded() });
pipe.end();
`,
      'ignore',
    );
    try {
      // Nothing reads until the child has written everything it has: its big write met a full pipe.
      await waitFor('the child to write', () => run.reports().length > 0);
      expect(run.reports()[0]).toEqual({ before: false, after: true });
      const chunks: Buffer[] = [];
      for await (const chunk of createReadStream(fifo)) chunks.push(chunk as Buffer);
      expect(await run.exited, run.stderr()).toBe(0);
      const received = Buffer.concat(chunks).toString('utf8');
      expect(received.length).toBe(lines(0, 60000).length);
      expect(received === lines(0, 60000)).toBe(true);
    } finally {
      closeSync(idle);
    }
  });
});
