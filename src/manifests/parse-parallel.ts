/**
 * Reading and parsing a large tree on two threads: the main thread and one worker take files from
 * one shared counter, so neither waits for the other and the worker's start-up delays nothing (the
 * main thread starts at once; the worker joins when it is ready). Each file's result is exactly
 * what the main thread would have made of it (the same parser, on the same text), and results are
 * put back in file order, so problems, their order and their positions do not change.
 *
 * A worker's results cross as plain arrays of values, not as environment objects: copying 50,000
 * objects between threads costs the receiving thread more than parsing a tenth of the files, and
 * the objects would arrive built key by key (a third more memory). The main thread builds each
 * environment with the registry's one shape and shares its names and lists with the rest of the
 * load (parse-fast.ts, valueSharer).
 */
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { environmentOf } from '../core/compiled.ts';
import { FIELD_LIST, type FieldSpec, type FieldValue } from '../core/fields.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { ownModule } from '../own-module.ts';
import { readManifestFile } from './discover.ts';
import { parseManifest } from './parse.ts';
import { valueSharer, type SharedValues } from './parse-fast.ts';
import type { ManifestDocument, ManifestProblem, ParsedManifest } from './parsed.ts';

/** One file to read: where it is, and how messages name it. */
export interface FileToParse {
  readonly path: string;
  readonly display: string;
}

/** What reading and parsing one file gave: a parse, or why the file could not be read. */
export type FileOutcome =
  | { readonly ok: true; readonly result: ParsedManifest }
  | { readonly ok: false; readonly message: string };

/** Reads and parses one file (the same on either thread). */
export function parseFile(
  file: FileToParse,
  maxFileBytes: number,
  shared: SharedValues | undefined,
): FileOutcome {
  const outcome = readManifestFile(file.path, maxFileBytes);
  if (!outcome.ok) return outcome;
  return { ok: true, result: parseManifest(outcome.text, file.display, shared) };
}

/**
 * A file's outcome as it crosses from the worker: a fast-path result as flat values (per document
 * its org and environment count, then per environment its name and each registry field in order,
 * lists as JSON text); anything else (problems, positions, a file that cannot be read) as it is.
 */
export type EncodedOutcome =
  | { readonly kind: 'flat'; readonly values: readonly unknown[] }
  | { readonly kind: 'outcome'; readonly outcome: FileOutcome };

/** See EncodedOutcome. */
export function encodeOutcome(outcome: FileOutcome): EncodedOutcome {
  if (!outcome.ok) return { kind: 'outcome', outcome };
  const { result } = outcome;
  const plain =
    result.problems.length === 0 &&
    result.declared === undefined &&
    result.documents.every((doc) => doc.environments.every((env) => env.source === undefined));
  if (!plain) return { kind: 'outcome', outcome };
  const values: unknown[] = [];
  for (const doc of result.documents) {
    values.push(doc.org, doc.environments.length);
    for (const env of doc.environments) {
      values.push(env.name);
      for (const spec of FIELD_LIST) values.push(encodeValue(spec, env[spec.name]));
    }
  }
  return { kind: 'flat', values };
}

function encodeValue(spec: FieldSpec, value: FieldValue | undefined): unknown {
  if (spec.kind !== 'set' || value === undefined) return value;
  const list = value as readonly string[];
  return list.length === 0 ? 0 : JSON.stringify(list);
}

/** Turns a worker's encoded outcome back into the main thread's, sharing values with the load. */
export function outcomeDecoder(shared: SharedValues): (encoded: EncodedOutcome) => FileOutcome {
  const { name, convert } = valueSharer(shared);
  const lists = new Map<string | 0, readonly string[]>();
  const list = (key: string | 0): readonly string[] => {
    let known = lists.get(key);
    if (known === undefined) {
      known = convert.set(key === 0 ? [] : (JSON.parse(key) as string[]));
      lists.set(key, known);
    }
    return known;
  };
  const cursor = { values: [] as readonly unknown[], at: 0 };
  // The text arrived as a new string of its own: no file text behind it to copy out of.
  const read = (c: typeof cursor, spec: FieldSpec): FieldValue | undefined => {
    const value = c.values[c.at++];
    if (value === undefined) return undefined;
    switch (spec.kind) {
      case 'enum':
        return convert.enum(value as string);
      case 'set':
        return list(value as string | 0);
      default:
        return value as FieldValue;
    }
  };
  return (encoded) => {
    if (encoded.kind === 'outcome') return encoded.outcome;
    const { values } = encoded;
    cursor.values = values;
    cursor.at = 0;
    const documents: ManifestDocument[] = [];
    while (cursor.at < values.length) {
      const org = name(values[cursor.at++] as string);
      const count = values[cursor.at++] as number;
      const environments: DesiredEnvironment[] = [];
      for (let i = 0; i < count; i++) {
        const envName = name(values[cursor.at++] as string);
        environments.push(environmentOf(envName, cursor, read) as DesiredEnvironment);
      }
      documents.push({ org, environments });
    }
    cursor.values = [];
    return { ok: true, result: { documents, problems: [] as ManifestProblem[] } };
  };
}

/** What the worker is given (see parse-worker.ts). */
export interface WorkerInput {
  readonly files: readonly FileToParse[];
  readonly maxFileBytes: number;
  /** [0]: the next file to take; [1]: results the worker has posted; [2]: 1 once it is done. */
  readonly counters: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** One message from the worker: a file's index and its outcome. */
export type WorkerMessage = readonly [index: number, outcome: EncodedOutcome];

/**
 * Reads and parses every file, on this thread and one worker, and returns the outcomes in file
 * order and how many of them the worker made. If the worker cannot start or fails, this thread
 * parses what it left. `mainThread: false` leaves every file to the worker (for tests: it proves
 * the worker's results, whatever the timing).
 */
export async function parseFilesInParallel(
  files: readonly FileToParse[],
  maxFileBytes: number,
  shared: SharedValues,
  { mainThread = true }: { readonly mainThread?: boolean } = {},
): Promise<{ outcomes: FileOutcome[]; byWorker: number }> {
  const outcomes: (FileOutcome | undefined)[] = Array.from({ length: files.length });
  const counters = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  const channel = new MessageChannel();
  let exited = false;
  let worker: Worker | undefined;
  try {
    const input: WorkerInput = {
      files,
      maxFileBytes,
      counters: counters.buffer,
      port: channel.port2,
    };
    worker = new Worker(new URL(ownModule('./parse-worker.ts'), import.meta.url), {
      workerData: input,
      transferList: [channel.port2],
      stdout: false,
      stderr: false,
    });
    worker.once('exit', () => {
      exited = true;
    });
    // A worker that fails leaves its files to this thread (below): its error is not the load's.
    worker.on('error', () => undefined);
    worker.unref();
  } catch {
    exited = true;
  }
  const decode = outcomeDecoder(shared);
  let received = 0;
  const drain = () => {
    for (;;) {
      const message = receiveMessageOnPort(channel.port1);
      if (message === undefined) return;
      const [index, encoded] = message.message as WorkerMessage;
      outcomes[index] = decode(encoded);
      received++;
    }
  };
  try {
    for (;;) {
      const index = mainThread ? Atomics.add(counters, 0, 1) : files.length;
      if (index >= files.length) break;
      outcomes[index] = parseFile(files[index] as FileToParse, maxFileBytes, shared);
      drain();
    }
    // The worker's last files: wait until it has posted everything it took, or has gone.
    for (;;) {
      drain();
      const posted = Atomics.load(counters, 1);
      if (received >= posted && (Atomics.load(counters, 2) === 1 || exited)) break;
      if (received < posted) continue;
      // Its last file takes a millisecond or so; a worker that failed is seen at the next turn
      // of the event loop (its 'exit' event), hence the short wait and the yield after it.
      if (Atomics.wait(counters, 1, posted, 20) === 'timed-out') {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  } finally {
    channel.port1.close();
    if (worker !== undefined && !exited) void worker.terminate();
  }
  // Files the worker took but never answered (it failed): read here.
  return {
    outcomes: outcomes.map(
      (outcome, index) => outcome ?? parseFile(files[index] as FileToParse, maxFileBytes, shared),
    ),
    byWorker: received,
  };
}
