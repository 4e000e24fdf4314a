/**
 * Serialized trainee bodies (UTF-8 JSON, ready to write to the socket), keyed by trainee id, lock version and API
 * version. A trainee's body is a function of its row and its placements and degrees only, and every write to any of
 * them bumps `lock_version`, so an entry never goes stale: a changed trainee simply has a new key. Least recently
 * used entries are dropped beyond `maxEntries`. Each process keeps its own; several instances stay correct because
 * the key comes from the database.
 */
export class TraineeBodyCache {
  private readonly entries = new Map<string, Buffer>();

  constructor(private readonly maxEntries = 10000) {}

  static key(id: string, lockVersion: number, version: string): string {
    return `${version}\u0000${id}\u0000${lockVersion}`;
  }

  get(key: string): Buffer | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Buffer): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
