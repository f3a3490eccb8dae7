// The request's log line (one per HTTP request), built by hand instead of by pino's generic path
// (issue 33). pino's per-line work (rest arguments and format(), the for-in over the object with its
// serializer and redaction lookups, escaping every key again) was about half of the line's cost; this
// line has a fixed shape, so its keys are constants and only its values are escaped, as pino escapes
// them. The bytes are pino's own: test/observability-request-line.test.ts holds them equal to pino's
// line for random values (quotes, backslashes, control characters, unicode, lone surrogates, long
// strings). Used only for a logger createLogger made (known options: no base, mixin, hooks, formatters
// or serializers), never for a key a redaction path names; any other logger gets the pino call.
import type { Logger } from 'pino';
import { plainJsonDestination, REDACTED_PATHS } from './logger.ts';

export interface RequestLineFields {
  req_id: string;
  method: string;
  route: string;
  status: number;
  latency_ms: number;
  org_id?: string;
  code?: string;
  trace_id?: string;
}

export type RequestLineLevel = 'info' | 'warn' | 'error';
/** Writes one request line at this level (when the logger's level lets it through). */
export type RequestLog = (level: RequestLineLevel, fields: RequestLineFields) => void;

/** The line's keys, in the order they are written (the order pino keeps: the object's own). */
export const REQUEST_LINE_KEYS = ['req_id', 'method', 'route', 'status', 'latency_ms', 'org_id', 'code', 'trace_id', 'msg'] as const;
const LEVEL_VALUES: Record<RequestLineLevel, number> = { info: 30, warn: 40, error: 50 };

/**
 * A redaction path's first name matching one of the line's keys would make a hand-built line leak
 * what pino would have censored: then every line goes through pino.
 */
export function redactionCouldMatch(paths: readonly string[]): boolean {
  return paths.some((path) => (REQUEST_LINE_KEYS as readonly string[]).includes(path.split(/[.[]/)[0]!) || path.startsWith('*'));
}

export function requestLog(logger: Logger): RequestLog {
  const destination = plainJsonDestination(logger);
  if (!destination || redactionCouldMatch(REDACTED_PATHS)) return (level, fields) => logger[level](fields, 'request');
  return (level, fields) => {
    const num = LEVEL_VALUES[level];
    if (num < logger.levelVal) return;
    const { org_id, code, trace_id } = fields;
    // A value of another type than declared (a caller's bug) is left to pino, which serialises anything.
    if (!isOptionalString(org_id) || !isOptionalString(code) || !isOptionalString(trace_id)) return void logger[level](fields, 'request');
    let line = `{"level":${num},"time":${Date.now()},"req_id":${asString(fields.req_id)},"method":${asString(fields.method)},"route":${asString(fields.route)},"status":${asNumber(fields.status)},"latency_ms":${asNumber(fields.latency_ms)}`;
    if (org_id !== undefined) line += `,"org_id":${asString(org_id)}`;
    if (code !== undefined) line += `,"code":${asString(code)}`;
    if (trace_id !== undefined) line += `,"trace_id":${asString(trace_id)}`;
    destination.write(`${line},"msg":"request"}\n`);
  };
}

function isOptionalString(value: unknown): value is string | undefined {
  return value === undefined || typeof value === 'string';
}

/** As pino writes a number: a non-finite one is null. */
function asNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** pino's string escaping, chosen as pino chooses it (pino/lib/tools.js `asString`). */
export const asString: (str: string) => string = Number(process.versions.node.split('.')[0]) >= 25 ? (str) => JSON.stringify(str) : pinoAsString;

/**
 * pino's own escaping before Node 25 (`_asString`), kept byte for byte: quotes and backslashes
 * escaped by hand, a string with a control character or over 100 characters through JSON.stringify,
 * anything else (unicode, lone surrogates included) as it is.
 */
function pinoAsString(str: string): string {
  const length = str.length;
  if (length > 100) return JSON.stringify(str);
  let result = '';
  let last = 0;
  let found = false;
  let point = 255;
  for (let i = 0; i < length && point >= 32; i++) {
    point = str.charCodeAt(i);
    if (point === 34 || point === 92) {
      result += `${str.slice(last, i)}\\`;
      last = i;
      found = true;
    }
  }
  result = found ? result + str.slice(last) : str;
  return point < 32 ? JSON.stringify(str) : `"${result}"`;
}
