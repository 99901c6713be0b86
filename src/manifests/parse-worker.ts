/**
 * The worker of parse-parallel.ts: takes files from the shared counter until none is left, and
 * posts each file's outcome with its index.
 */
import { workerData } from 'node:worker_threads';
import {
  encodeOutcome,
  parseFile,
  type WorkerInput,
  type WorkerMessage,
} from './parse-parallel.ts';
import { sharedValues } from './parse-fast.ts';

const { files, maxFileBytes, counters: buffer, port } = workerData as WorkerInput;
const counters = new Int32Array(buffer);
const shared = sharedValues();
try {
  for (;;) {
    const index = Atomics.add(counters, 0, 1);
    if (index >= files.length) break;
    const file = files[index] as WorkerInput['files'][number];
    const message: WorkerMessage = [index, encodeOutcome(parseFile(file, maxFileBytes, shared))];
    port.postMessage(message);
    Atomics.add(counters, 1, 1);
    Atomics.notify(counters, 1);
  }
} finally {
  Atomics.store(counters, 2, 1);
  Atomics.notify(counters, 1);
  port.close();
}
