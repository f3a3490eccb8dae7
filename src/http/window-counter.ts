// The per-key request counts of one instance (no Redis configured): fixed windows in memory, as
// express-rate-limit's MemoryStore counts them (a key's window starts at its first request; keys
// idle for a whole window are let go), but answered synchronously. MemoryStore's methods are async,
// so every authenticated request paid a promise and a microtask turn for an in-memory count
// (issue 33's profile: "the rate limiter's promise per request"); the key limiter
// (rate-limits.ts) now reads a count at once when its store answers one.
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';

interface Client {
  totalHits: number;
  resetTime: Date;
}

export class WindowCounter implements Store {
  readonly localKeys = true;
  private windowMs = 60_000;
  /** Keys counted in this rotation, and in the one before (let go at the next rotation unless used). */
  private current = new Map<string, Client>();
  private previous = new Map<string, Client>();
  private interval?: NodeJS.Timeout;

  init(options: Options): void {
    this.windowMs = options.windowMs;
    if (this.interval) clearInterval(this.interval);
    this.interval = setInterval(() => this.rotate(), this.windowMs);
    this.interval.unref?.();
  }

  increment(key: string): IncrementResponse {
    const client = this.client(key);
    const now = Date.now();
    if (client.resetTime.getTime() <= now) this.restart(client, now);
    client.totalHits++;
    return client;
  }

  decrement(key: string): void {
    const client = this.client(key);
    if (client.totalHits > 0) client.totalHits--;
  }

  get(key: string): ClientRateLimitInfo | undefined {
    const client = this.current.get(key) ?? this.previous.get(key);
    return client && client.resetTime.getTime() > Date.now() ? client : undefined;
  }

  resetKey(key: string): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  resetAll(): void {
    this.current.clear();
    this.previous.clear();
  }

  shutdown(): void {
    clearInterval(this.interval);
    this.resetAll();
  }

  /** The key's count, moved into this rotation (a new one, its window starting now, when unknown). */
  private client(key: string): Client {
    let client = this.current.get(key);
    if (client) return client;
    client = this.previous.get(key);
    if (client) this.previous.delete(key);
    else client = this.restart({ totalHits: 0, resetTime: new Date(0) }, Date.now());
    this.current.set(key, client);
    return client;
  }

  private restart(client: Client, now: number): Client {
    client.totalHits = 0;
    client.resetTime = new Date(now + this.windowMs);
    return client;
  }

  private rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}
