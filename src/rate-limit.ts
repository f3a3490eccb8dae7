// Rate-limit counters shared by every instance through Redis (REDIS_URL), so that a key limited to
// N requests a window gets N in total, not N per instance.
//
// Redis must never take the API down. Each limiter's store talks to Redis while it answers and
// falls back to the instance's own memory when it does not (not connected, an error, or no answer
// within a short timeout): during an outage limits hold per instance, and shared counting resumes
// by itself when Redis is back. Without REDIS_URL there is no Redis at all: limits are per instance.
import { MemoryStore, type ClientRateLimitInfo, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { createClient, type RedisClientType } from 'redis';
import { log } from './log.ts';

export interface RateLimitBackend {
  /** For ServerOptions.rateLimitStore: a new store per limiter; undefined = express-rate-limit's memory store. */
  store?: () => Store;
  /** 'redis' (shared), 'fallback' (Redis configured but unreachable: per instance), 'memory' (no Redis configured). */
  mode(): 'redis' | 'fallback' | 'memory';
  close(): Promise<void>;
}

export interface RedisRateLimitOptions {
  /** Key prefix in Redis (default "tribunal:rl:"). */
  prefix?: string;
  /** How long a Redis command may take before the request is counted locally instead (default 250 ms). */
  commandTimeoutMs?: number;
  /** Logs outage and recovery; default the process log. */
  log?: (message: string) => void;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  promise.catch(() => {}); // a late failure after the timeout must not become an unhandled rejection
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Tracks whether Redis answers, to log an outage and the recovery once each. */
class RedisHealth {
  healthy = true;
  private connected = false;
  constructor(private readonly log: (message: string) => void) {}
  ok(): void {
    if (!this.healthy) this.log('[tribunal] Redis is back: rate limits are shared across instances again.');
    else if (!this.connected) this.log('[tribunal] Redis connected: rate limits are shared across instances.');
    this.healthy = true;
    this.connected = true;
  }
  failed(err: unknown): void {
    if (this.healthy) this.log(`[tribunal] Redis unreachable (${(err as Error).message}): rate limits now count per instance until it returns.`);
    this.healthy = false;
  }
}

/** One limiter's counters: in Redis while it answers, in this instance's memory while it does not. */
export class SharedRateLimitStore implements Store {
  readonly localKeys = false;
  prefix: string;
  private readonly memory = new MemoryStore();
  private redis?: RedisStore;
  private options?: Options;
  private scriptsLoaded?: Promise<void>;

  constructor(
    private readonly client: RedisClientType<any, any, any, any, any>,
    private readonly health: RedisHealth,
    private readonly opts: { prefix: string; commandTimeoutMs: number },
  ) {
    this.prefix = opts.prefix;
  }

  init(options: Options): void {
    this.options = options;
    this.memory.init(options);
    // The window is part of the key, so limiters with different windows never share a counter.
    this.prefix = `${this.opts.prefix}${options.windowMs}:`;
    this.redis = new RedisStore({ prefix: this.prefix, sendCommand: (...args: string[]) => this.client.sendCommand(args) as Promise<any> });
  }

  /** Redis, ready for commands; throws when it is not reachable. */
  private async ready(): Promise<RedisStore> {
    if (!this.redis || !this.options) throw new Error('rate-limit store used before init');
    if (!this.client.isReady) throw new Error('not connected');
    // rate-limit-redis loads its scripts in init; a failed load (Redis down at start) is retried here.
    this.scriptsLoaded ??= this.redis.init(this.options).catch((err) => {
      this.scriptsLoaded = undefined;
      throw err;
    });
    await withTimeout(this.scriptsLoaded, this.opts.commandTimeoutMs);
    return this.redis;
  }

  private async shared<T>(op: (redis: RedisStore) => Promise<T>, local: () => Promise<T> | T): Promise<T> {
    try {
      const result = await withTimeout(this.ready().then(op), this.opts.commandTimeoutMs);
      this.health.ok();
      return result;
    } catch (err) {
      this.health.failed(err);
      return local();
    }
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.shared(
      (r) => r.increment(key),
      () => this.memory.increment(key),
    );
  }
  decrement(key: string): Promise<void> {
    return this.shared(
      (r) => r.decrement(key),
      () => this.memory.decrement(key),
    );
  }
  resetKey(key: string): Promise<void> {
    return this.shared(
      (r) => r.resetKey(key),
      () => this.memory.resetKey(key),
    );
  }
  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.shared(
      (r) => r.get(key),
      () => this.memory.get(key),
    );
  }
  shutdown(): void {
    this.memory.shutdown();
  }
}

/** Connects to Redis in the background (never blocking start-up) and answers the limiter stores. */
export function redisRateLimitBackend(url: string, opts: RedisRateLimitOptions = {}): RateLimitBackend {
  const warn = opts.log ?? ((m: string) => log.warn(m));
  const health = new RedisHealth(warn);
  const client = createClient({
    url,
    // Commands sent while disconnected fail at once (and count locally) instead of queueing.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 5000),
    },
  });
  let closed = false;
  // The client reports every failed (re)connection attempt here; without a listener Node would
  // treat it as an uncaught error and exit.
  client.on('error', (err: Error) => health.failed(err));
  client.on('ready', () => health.ok());
  client.connect().catch((err: Error) => {
    if (!closed) health.failed(err);
  });
  const stores: SharedRateLimitStore[] = [];
  return {
    store: () => {
      const store = new SharedRateLimitStore(client as RedisClientType<any, any, any, any, any>, health, {
        prefix: opts.prefix ?? 'tribunal:rl:',
        commandTimeoutMs: opts.commandTimeoutMs ?? 250,
      });
      stores.push(store);
      return store;
    },
    mode: () => (client.isReady && health.healthy ? 'redis' : 'fallback'),
    async close() {
      closed = true;
      for (const s of stores) s.shutdown();
      if (client.isOpen) client.destroy();
    },
  };
}

/** The backend the configuration asks for: Redis when REDIS_URL is set, else per-instance memory. */
export function rateLimitBackend(config: { redisUrl?: string; redisPrefix?: string; redisTimeoutMs?: number }, opts: RedisRateLimitOptions = {}): RateLimitBackend {
  if (config.redisUrl) return redisRateLimitBackend(config.redisUrl, { prefix: config.redisPrefix, commandTimeoutMs: config.redisTimeoutMs, ...opts });
  return { store: undefined, mode: () => 'memory', close: async () => {} };
}
