/** An unbounded async queue: producers push, one consumer iterates; close() ends it (optionally with an error). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly waiters: Array<{
    resolve: (r: IteratorResult<T, undefined>) => void;
    reject: (e: unknown) => void;
  }> = [];
  private closed = false;
  private failed = false;
  private error: unknown;

  get isClosed(): boolean {
    return this.closed;
  }

  /** False when the queue is already closed (the item is dropped). */
  push(item: T): boolean {
    if (this.closed) {
      return false;
    }
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
    return true;
  }

  /** End the queue: consumers drain what is queued, then finish (or throw `error`). */
  close(...error: [] | [unknown]): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    if (error.length > 0) {
      this.failed = true;
      this.error = error[0];
    }
    for (const waiter of this.waiters.splice(0)) {
      if (this.failed) {
        waiter.reject(this.error);
      } else {
        waiter.resolve({ value: undefined, done: true });
      }
    }
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.items.length > 0) {
      return Promise.resolve({ value: this.items.shift() as T, done: false });
    }
    if (this.closed) {
      if (this.failed) {
        const error = this.error;
        // Report the error once; later calls just finish.
        this.failed = false;
        return Promise.reject(error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: () => this.next(),
      return: () => {
        this.close();
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
