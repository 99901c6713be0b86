/**
 * One write serving many callers: asked for while a write runs, it is served by the single next
 * write, which starts when that one ends. However many callers ask at once, at most one write
 * runs and one more waits.
 */
export class Coalescer {
  readonly #write: () => Promise<void>;
  /** Callers waiting for a write that has not started yet: the next write serves them all. */
  #batch: Batch | undefined;
  #inFlight: Promise<void> | undefined;
  #pumping = false;

  /** `write` is called for each write; it rejects to fail every caller that write serves. */
  constructor(write: () => Promise<void>) {
    this.#write = write;
  }

  /** The write under way, for a caller that has nothing new for the next one. */
  get inFlight(): Promise<void> | undefined {
    return this.#inFlight;
  }

  /** Settles as the next write to start does. */
  request(): Promise<void> {
    const batch = (this.#batch ??= newBatch());
    void this.#pump();
    return batch.promise;
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#batch !== undefined) {
        const batch = this.#batch;
        this.#batch = undefined;
        this.#inFlight = batch.promise;
        try {
          await this.#write();
          batch.resolve();
        } catch (error) {
          batch.reject(error);
        }
      }
    } finally {
      this.#inFlight = undefined;
      this.#pumping = false;
    }
  }
}

/** A write waiting to start, and everyone waiting for it. */
interface Batch {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

function newBatch(): Batch {
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  promise.catch(() => undefined); // each caller awaits it; no caller left is not an unhandled error
  return { promise, resolve, reject };
}
