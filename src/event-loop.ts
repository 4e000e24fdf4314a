/**
 * A turn of the event loop: what is waiting on I/O (database replies, timers) runs before the caller goes on. Long
 * synchronous work (building a row index, registering routes) awaits it between its steps.
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves once `busy` says false, asking it every 20 ms (at once when it already does). */
export async function whileBusy(busy: () => boolean): Promise<void> {
  while (busy()) await new Promise<void>((resolve) => setTimeout(resolve, 20));
}
