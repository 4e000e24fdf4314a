/** Runs a task again when woken, never twice at once: wake-ups that arrive while it runs make one more run. */
export class CoalescedTask {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (error: Error) => void,
  ) {}

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** No more runs; resolves when the current one has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
