// Every setting in one place: the environment in, a typed and validated config out.
// Tests build configs with loadConfig({ ...overrides }) instead of touching process.env.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_PRICES } from './prices.ts';
import { MAKE_SECRET_HINT } from './secret-box.ts';
import { proxyUpstreamList, proxyUpstreams } from './schemas/proxy-upstreams.ts'; // h-proxy

/** "24h", "30m", "90s", "2d" or a plain number of seconds -> milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${JSON.stringify(text)} (use e.g. 90s, 30m, 24h, 7d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 's') as 'ms'];
  return Math.round(Number(match[1]) * unit);
}

/** "1mb", "512kb", "1048576" -> bytes. */
export function parseBytes(text: string): number {
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!match) throw new Error(`not a size: ${JSON.stringify(text)} (use e.g. 1mb, 512kb)`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Number(match[1]) * unit;
}

const bool = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (min: number) => z.coerce.number().int().min(min);
const duration = z.string().transform((v, ctx) => {
  try {
    return parseDuration(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});
const bytes = z.string().transform((v, ctx) => {
  try {
    return parseBytes(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

// Price per million tokens, USD: the defaults live beside the cost code (src/engine/cost.ts, with
// where they come from); TRIBUNAL_PRICES (JSON of the same shape) extends and overrides them.
export { DEFAULT_PRICES };
const prices = z.string().transform((v, ctx) => {
  let json: unknown;
  try {
    json = JSON.parse(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `is not valid JSON (${(e as Error).message}); use e.g. {"my-model": {"input": 1, "output": 5}} (USD per million tokens)` });
    return z.NEVER;
  }
  const parsed = PriceTableSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.join('.') || 'the value';
    ctx.addIssue({
      code: 'custom',
      message: `${where}: must be {"model-name": {"input": <USD>, "output": <USD>}} (optionally "cache_read" and "cache_write") with prices per million tokens, 0 or more`,
    });
    return z.NEVER;
  }
  return { ...DEFAULT_PRICES, ...parsed.data };
});
const usd = z.number().finite().min(0);
const PriceTableSchema = z.record(z.string().min(1), z.strictObject({ input: usd, output: usd, cache_read: usd.optional(), cache_write: usd.optional() }));

/** The current Sonnet generation (the SDK's model list, 2026-11); see docs/SCORING.md before changing it. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

const EnvSchema = z.object({
  PORT: int(0).default(8787),
  HOST: z.string().default('127.0.0.1'),
  TRIBUNAL_PUBLIC_URL: z.string().url().optional(),
  TRIBUNAL_DATA_DIR: z.string().default('.tribunal-data'),
  TRIBUNAL_STORE: z.enum(['json', 'postgres']).default('json'),
  DATABASE_URL: z.string().optional(),
  TRIBUNAL_PG_POOL_MAX: int(1).default(10),
  REDIS_URL: z.string().optional(),
  TRIBUNAL_REDIS_PREFIX: z.string().default('tribunal:rl:'),
  TRIBUNAL_REDIS_TIMEOUT: duration.default(250),
  // No proxy is trusted unless named: X-Forwarded-* from anyone else is ignored (docs/DEPLOYMENT.md).
  TRUST_PROXY: z.string().default('false'),
  TRIBUNAL_DEMO_KEY_TTL: duration.default(parseDuration('24h')),
  TRIBUNAL_DEMO_RATE_LIMIT: int(1).default(20),
  TRIBUNAL_DEMO_RATE_WINDOW: duration.default(parseDuration('1h')),
  TRIBUNAL_RATE_LIMIT: int(1).default(600),
  TRIBUNAL_RATE_WINDOW: duration.default(parseDuration('1m')),
  TRIBUNAL_MAX_BODY: bytes.default(parseBytes('1mb')),
  TRIBUNAL_MAX_CONTEXTS: int(1).default(100),
  TRIBUNAL_MAX_TEXT: int(1).default(200_000),
  TRIBUNAL_MAX_TURNS: int(1).default(500),
  TRIBUNAL_MAX_CONVERSATION: int(1).default(400_000),
  TRIBUNAL_MAX_PAGE_SIZE: int(1).default(200),
  TRIBUNAL_MAX_KEYS_PER_ORG: int(1).default(100),
  TRIBUNAL_MAX_KEYS_PER_DEMO_ORG: int(1).default(5),
  TRIBUNAL_HEADERS_TIMEOUT: duration.default(parseDuration('20s')),
  TRIBUNAL_REQUEST_TIMEOUT: duration.default(parseDuration('30s')),
  TRIBUNAL_SHUTDOWN_GRACE: duration.default(parseDuration('10s')),
  // A tag is a PostgreSQL GIN index key (at most ~2,700 bytes, 4 per character at worst).
  TRIBUNAL_MAX_TAG_CHARS: int(1).max(500).default(200),
  TRIBUNAL_MAX_TAGS: int(1).default(50),
  TRIBUNAL_MAX_JUDGE_EVALUATORS: int(1).default(100),
  TRIBUNAL_DEMO_RETENTION: duration.default(parseDuration('7d')),
  MCP_ENABLED: bool.default(true),
  TRIBUNAL_ALLOWED_HOSTS: list.optional(),
  TRIBUNAL_ALLOWED_ORIGINS: list.optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  TRIBUNAL_MODEL: z.string().default(DEFAULT_MODEL),
  TRIBUNAL_MODEL_CONCURRENCY: int(1).default(16),
  TRIBUNAL_BATCH_CONCURRENCY: int(1).max(10_000).default(64),
  TRIBUNAL_BATCH_CHUNK: int(1).max(1000).default(16),
  TRIBUNAL_BATCH_LEASE: duration.default(parseDuration('5m')),
  TRIBUNAL_PROVIDER_BATCH_POLL: duration.default(parseDuration('30s')),
  TRIBUNAL_PROVIDER_BATCH_ROWS: int(1).max(50000).default(5000),
  TRIBUNAL_BATCH_WORKER: bool.default(true),
  // Budgets (room h-cost): every organization's default daily cost cap in USD (unset: none).
  TRIBUNAL_ORG_DAILY_BUDGET_USD: z.coerce.number().finite().min(0).optional(),
  TRIBUNAL_MODEL_TIMEOUT: duration.default(parseDuration('60s')),
  TRIBUNAL_MODEL_RETRIES: int(0).default(4),
  TRIBUNAL_MODEL_BACKOFF: duration.default(parseDuration('500ms')),
  TRIBUNAL_MODEL_BACKOFF_MAX: duration.default(parseDuration('20s')),
  TRIBUNAL_MODEL_MAX_TOKENS: int(64).default(1024),
  TRIBUNAL_RESULT_CACHE_MAX: int(1).default(100_000),
  TRIBUNAL_PRICES: prices.default(DEFAULT_PRICES),
  TRIBUNAL_ALLOWED_MODELS: list.optional(),
  // h-attach: whether the server's own model takes images and PDFs (Claude does; an Anthropic-compatible server may not).
  TRIBUNAL_MODEL_ATTACHMENTS: bool.default(true),
  TRIBUNAL_SECRET_KEY: z
    .string()
    .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v.trim()) && Buffer.from(v.trim(), 'base64').length === 32, {
      message: `must be the base64 of exactly 32 random bytes (make one with: ${MAKE_SECRET_HINT})`,
    })
    .optional(),
  TRIBUNAL_MODEL_HOSTS: list.optional(),
  // h-harden: the SSRF policy of registered models (docs/DEPLOYMENT.md, "Security").
  TRIBUNAL_MODEL_ALLOW_LOOPBACK: bool.default(true),
  TRIBUNAL_MODEL_ALLOW_PRIVATE: bool.default(false),
  TRIBUNAL_DEMO_MODELS: bool.default(false),
  TRIBUNAL_PROXY_UPSTREAMS: proxyUpstreams.optional(),
  TRIBUNAL_BATCH_JOB_RETENTION: duration.default(parseDuration('1h')),
  // h-harden: per-organization quotas (docs/DEPLOYMENT.md, "Security"); demo organizations far lower.
  TRIBUNAL_QUOTA_ITEMS: int(1).default(5_000_000),
  TRIBUNAL_QUOTA_DATASETS: int(1).default(10_000),
  TRIBUNAL_QUOTA_RUNNING_BATCHES: int(1).default(20),
  TRIBUNAL_QUOTA_ROWS_PER_DAY: int(1).default(2_000_000),
  TRIBUNAL_DEMO_QUOTA_ITEMS: int(1).default(20_000),
  TRIBUNAL_DEMO_QUOTA_DATASETS: int(1).default(50),
  TRIBUNAL_DEMO_QUOTA_RUNNING_BATCHES: int(1).default(3),
  TRIBUNAL_DEMO_QUOTA_ROWS_PER_DAY: int(1).default(20_000),
  // h-attach: attachments an organization holds (src/files/): how many, and their bytes in all.
  TRIBUNAL_QUOTA_FILES: int(1).default(10_000),
  TRIBUNAL_QUOTA_FILE_BYTES: int(1).default(10 * 1024 ** 3),
  TRIBUNAL_DEMO_QUOTA_FILES: int(1).default(20),
  TRIBUNAL_DEMO_QUOTA_FILE_BYTES: int(1).default(50 * 1024 ** 2),
  TRIBUNAL_SESSION_SECRET: z.string().min(32, 'must be at least 32 characters (make one with: openssl rand -base64 32)').optional(),
  TRIBUNAL_SESSION_TTL: duration.default(parseDuration('12h')),
  TRIBUNAL_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRIBUNAL_LOG_PRETTY: bool.optional(),
  TRIBUNAL_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (make one with: openssl rand -hex 16)').optional(),
  TRIBUNAL_PROCESS_METRICS: bool.default(true),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().default('tribunal'),
  // h-traces: the OTLP receiver and online evaluation (docs/TRACES.md).
  TRIBUNAL_TRACE_RETENTION: duration.default(parseDuration('7d')),
  TRIBUNAL_TRACE_MAX_SPANS: int(1).default(200_000),
  TRIBUNAL_TRACE_MAX_LOG_RECORDS: int(1).default(400_000),
  TRIBUNAL_TRACE_CONTENT_WAIT: duration.default(parseDuration('30s')),
  TRIBUNAL_OTLP_MAX_BODY: bytes.default(parseBytes('4mb')),
  TRIBUNAL_OTLP_MAX_DECOMPRESSED: bytes.default(parseBytes('32mb')),
  TRIBUNAL_EVAL_EXPORT_OTLP_ENDPOINT: z.string().url().optional(),
  // h-checks: the code evaluators' sandbox (docs/CHECKS.md)
  TRIBUNAL_CODE_TIMEOUT: duration.default(200),
  TRIBUNAL_CODE_MEMORY: bytes.default(parseBytes('32mb')),
  TRIBUNAL_CODE_WORKERS: int(1).max(64).default(1),
});

export type Config = ReturnType<typeof loadConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  // Empty strings mean "unset": a blank line in an env file must not override a default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.TRIBUNAL_STORE === 'postgres' && !e.DATABASE_URL) {
    throw new Error('Invalid configuration:\n  DATABASE_URL: required when TRIBUNAL_STORE=postgres');
  }
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.TRIBUNAL_PUBLIC_URL,
    dataDir: path.resolve(e.TRIBUNAL_DATA_DIR),
    store: e.TRIBUNAL_STORE,
    databaseUrl: e.DATABASE_URL,
    /** PostgreSQL connections per instance; instances x this must stay under the server's max_connections. */
    pgPoolMax: e.TRIBUNAL_PG_POOL_MAX,
    redisUrl: e.REDIS_URL,
    /** Key prefix of the shared rate-limit counters in Redis (several deployments can share one Redis). */
    redisPrefix: e.TRIBUNAL_REDIS_PREFIX,
    /** How long a Redis command may take before the request is counted by this instance alone (fails open). */
    redisTimeoutMs: e.TRIBUNAL_REDIS_TIMEOUT,
    trustProxy: e.TRUST_PROXY,
    demoKeyTtlMs: e.TRIBUNAL_DEMO_KEY_TTL,
    /** How long a demo organization's data is kept after its key expired. */
    demoRetentionMs: e.TRIBUNAL_DEMO_RETENTION,
    demoRateLimit: { limit: e.TRIBUNAL_DEMO_RATE_LIMIT, windowMs: e.TRIBUNAL_DEMO_RATE_WINDOW },
    rateLimit: { limit: e.TRIBUNAL_RATE_LIMIT, windowMs: e.TRIBUNAL_RATE_WINDOW },
    limits: {
      bodyBytes: e.TRIBUNAL_MAX_BODY,
      contexts: e.TRIBUNAL_MAX_CONTEXTS,
      textChars: e.TRIBUNAL_MAX_TEXT,
      /** Turns in one conversation, and characters of the whole conversation (docs/SCORING.md, "Conversations"). */
      turns: e.TRIBUNAL_MAX_TURNS,
      conversationChars: e.TRIBUNAL_MAX_CONVERSATION,
      pageSize: e.TRIBUNAL_MAX_PAGE_SIZE,
      /** Live (not revoked, not expired) API keys an organization may hold; demo organizations get fewer. */
      keysPerOrg: e.TRIBUNAL_MAX_KEYS_PER_ORG,
      keysPerDemoOrg: e.TRIBUNAL_MAX_KEYS_PER_DEMO_ORG,
      tagChars: e.TRIBUNAL_MAX_TAG_CHARS,
      tags: e.TRIBUNAL_MAX_TAGS,
      judgeEvaluators: e.TRIBUNAL_MAX_JUDGE_EVALUATORS,
    },
    /** Slow clients: the headers, then the whole request, must arrive within these (answers are not limited). */
    http: {
      headersTimeoutMs: Math.min(e.TRIBUNAL_HEADERS_TIMEOUT, e.TRIBUNAL_REQUEST_TIMEOUT),
      requestTimeoutMs: e.TRIBUNAL_REQUEST_TIMEOUT,
      /** On SIGTERM, how long requests in flight may still run before they are cut short. */
      shutdownGraceMs: e.TRIBUNAL_SHUTDOWN_GRACE,
    },
    // Batch runs (docs/BATCH.md): rows in flight per instance, rows per unit of work (a pg-boss job on
    // PostgreSQL), how long a unit may run before another instance may take it over, and whether
    // this instance takes batch work at all.
    batch: {
      concurrency: e.TRIBUNAL_BATCH_CONCURRENCY,
      chunk: e.TRIBUNAL_BATCH_CHUNK,
      leaseMs: Math.max(1000, e.TRIBUNAL_BATCH_LEASE),
      worker: e.TRIBUNAL_BATCH_WORKER,
      /** h-harden: PostgreSQL: finished pg-boss jobs (with item text) are deleted after this. */
      jobRetentionMs: e.TRIBUNAL_BATCH_JOB_RETENTION,
      /** issue 32, mode provider_batch: how often a provider batch is polled, and rows per unit of work (one provider batch per model). */
      providerPollMs: Math.max(10, e.TRIBUNAL_PROVIDER_BATCH_POLL),
      providerRows: e.TRIBUNAL_PROVIDER_BATCH_ROWS,
    },
    // Budgets (room h-cost, docs/COST.md): the default daily cap of every organization (an admin may set another per org).
    budget: { orgDailyUsd: e.TRIBUNAL_ORG_DAILY_BUDGET_USD ?? null },
    mcp: {
      enabled: e.MCP_ENABLED,
      allowedHosts: e.TRIBUNAL_ALLOWED_HOSTS,
      allowedOrigins: e.TRIBUNAL_ALLOWED_ORIGINS,
    },
    model: {
      apiKey: e.ANTHROPIC_API_KEY,
      baseUrl: e.ANTHROPIC_BASE_URL,
      name: e.TRIBUNAL_MODEL,
      concurrency: e.TRIBUNAL_MODEL_CONCURRENCY,
      timeoutMs: e.TRIBUNAL_MODEL_TIMEOUT,
      retries: e.TRIBUNAL_MODEL_RETRIES,
      /** First retry waits about this long (with jitter); each further retry doubles it, up to backoffMaxMs. */
      backoffMs: e.TRIBUNAL_MODEL_BACKOFF,
      backoffMaxMs: e.TRIBUNAL_MODEL_BACKOFF_MAX,
      maxTokens: e.TRIBUNAL_MODEL_MAX_TOKENS,
      prices: e.TRIBUNAL_PRICES,
      /** Result-cache entries kept at most (use_cache; docs/MODELS.md, "Caching"), the least recently used evicted. */
      resultCacheMax: e.TRIBUNAL_RESULT_CACHE_MAX,
      // Models an evaluator may name as its override. The server pays for every call, so a caller
      // (a demo user included) cannot pick an arbitrary, possibly expensive, model.
      allowed: e.TRIBUNAL_ALLOWED_MODELS ?? [...new Set([e.TRIBUNAL_MODEL, ...Object.keys(e.TRIBUNAL_PRICES)])],
      allowedFromEnv: e.TRIBUNAL_ALLOWED_MODELS !== undefined,
      /** h-attach: the server's model is given attachments (engine/attachments.ts). */
      attachments: e.TRIBUNAL_MODEL_ATTACHMENTS,
    },
    // The per-organization model registry (docs/DEPLOYMENT.md): the secret that seals registered
    // models' API keys, and the hosts their base_url may name (unset: any host, loopback included).
    registry: {
      secretKey: e.TRIBUNAL_SECRET_KEY ? Buffer.from(e.TRIBUNAL_SECRET_KEY.trim(), 'base64') : null,
      modelHosts: e.TRIBUNAL_MODEL_HOSTS ?? null,
      // h-harden: link-local and metadata addresses are refused always; loopback by default allowed, private ranges not.
      allowLoopback: e.TRIBUNAL_MODEL_ALLOW_LOOPBACK,
      allowPrivate: e.TRIBUNAL_MODEL_ALLOW_PRIVATE,
      /** Whether demo (anonymous) organizations may register models; off by default. */
      demoModels: e.TRIBUNAL_DEMO_MODELS,
    },
    // h-proxy: upstreams the judge proxy may forward to by name besides registered models (docs/PROXY.md).
    proxy: { upstreams: proxyUpstreamList(e.TRIBUNAL_PROXY_UPSTREAMS ?? {}, cleaned) },
    // h-harden: per-organization quotas (src/quotas/quotas.ts).
    quotas: {
      org: {
        items: e.TRIBUNAL_QUOTA_ITEMS,
        datasets: e.TRIBUNAL_QUOTA_DATASETS,
        runningBatches: e.TRIBUNAL_QUOTA_RUNNING_BATCHES,
        rowsPerDay: e.TRIBUNAL_QUOTA_ROWS_PER_DAY,
        files: e.TRIBUNAL_QUOTA_FILES,
        fileBytes: e.TRIBUNAL_QUOTA_FILE_BYTES,
      },
      demo: {
        items: e.TRIBUNAL_DEMO_QUOTA_ITEMS,
        datasets: e.TRIBUNAL_DEMO_QUOTA_DATASETS,
        runningBatches: e.TRIBUNAL_DEMO_QUOTA_RUNNING_BATCHES,
        rowsPerDay: e.TRIBUNAL_DEMO_QUOTA_ROWS_PER_DAY,
        files: e.TRIBUNAL_DEMO_QUOTA_FILES,
        fileBytes: e.TRIBUNAL_DEMO_QUOTA_FILE_BYTES,
      },
    },
    // Web sessions: without a configured secret each process makes its own, so sessions do not
    // survive a restart or span instances (docs/WEB.md).
    session: {
      secret: e.TRIBUNAL_SESSION_SECRET ?? randomBytes(32).toString('base64url'),
      secretFromEnv: e.TRIBUNAL_SESSION_SECRET !== undefined,
      ttlMs: e.TRIBUNAL_SESSION_TTL,
    },
    // Logs, metrics and traces (docs/DEPLOYMENT.md, "Running it").
    observability: {
      logLevel: e.TRIBUNAL_LOG_LEVEL,
      /** Unset: pretty when stdout is a terminal, JSON lines otherwise. */
      logPretty: e.TRIBUNAL_LOG_PRETTY,
      /** Unset: /metrics answers 404. */
      metricsToken: e.TRIBUNAL_METRICS_TOKEN,
      /**
       * prom-client's process metrics (CPU, memory, event-loop lag, GC) run monitors all the time,
       * about 3-5% of a judge run's server CPU (docs/BENCHMARKS.md): only when /metrics can be read.
       */
      processMetrics: e.TRIBUNAL_PROCESS_METRICS && e.TRIBUNAL_METRICS_TOKEN !== undefined,
      /** The standard OTLP/HTTP settings; traces are exported only when one is set. */
      otlpTracesUrl: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
      serviceName: e.OTEL_SERVICE_NAME,
    },
    // h-traces: spans kept per organization (retention, cap), OTLP body limits (compressed, then
    // decompressed), and where evaluation results are exported as OTLP spans (docs/TRACES.md).
    traces: {
      retentionMs: e.TRIBUNAL_TRACE_RETENTION,
      maxSpansPerOrg: e.TRIBUNAL_TRACE_MAX_SPANS,
      /** GenAI log events (POST /otel/v1/logs) held per organization, their spans stored or not. */
      maxLogEventsPerOrg: e.TRIBUNAL_TRACE_MAX_LOG_RECORDS,
      /** How long after a GenAI span arrives without content a rule waits for its log records before counting it unreadable. */
      contentWaitMs: e.TRIBUNAL_TRACE_CONTENT_WAIT,
      maxBodyBytes: e.TRIBUNAL_OTLP_MAX_BODY,
      maxDecompressedBytes: e.TRIBUNAL_OTLP_MAX_DECOMPRESSED,
      evalExportEndpoint: e.TRIBUNAL_EVAL_EXPORT_OTLP_ENDPOINT,
    },
    // h-checks: code evaluators (docs/CHECKS.md): time and memory of one run, worker threads of the sandbox.
    code: {
      timeoutMs: Math.max(1, e.TRIBUNAL_CODE_TIMEOUT),
      memoryBytes: Math.max(parseBytes('1mb'), e.TRIBUNAL_CODE_MEMORY),
      workers: e.TRIBUNAL_CODE_WORKERS,
    },
  };
}
