// JSON lines through pino; pretty lines for a person at a terminal. What gets logged is chosen
// field by field by the callers (no request or response bodies, no headers); the redaction paths
// are a second net for anything that names a secret.
import { pino, symbols, type DestinationStream, type Logger } from 'pino';
import { LineBatch } from './line-batch.ts';

export type { Logger };

export interface LoggerSettings {
  logLevel: string;
  /** Undefined: pretty exactly when stdout is a terminal. */
  logPretty?: boolean;
}

// Top-level names only: wildcard paths doubled the CPU of every log line (measured: 6.2 -> 13.8 us).
export const REDACTED_PATHS: readonly string[] = ['authorization', 'cookie', 'api_key', 'apiKey', 'token', 'password', 'headers.authorization', 'headers.cookie'];

export async function createLogger(settings: LoggerSettings, destination?: DestinationStream): Promise<Logger> {
  const options = {
    level: settings.logLevel,
    base: undefined, // no pid/hostname on every line: the platform adds its own
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
  };
  if (destination) return plain(pino(options, destination), destination);
  const wantsPretty = settings.logPretty ?? process.stdout.isTTY === true;
  // Lines are written 64 KiB at a time, at least every second and at exit (line-batch.ts): one
  // write(2) per request and per model call was a measurable share of a judge run's CPU.
  if (!wantsPretty) {
    const lines = new LineBatch(1);
    return plain(pino(options, lines), lines);
  }
  // Loaded only when wanted: a server logging JSON does not pay its start-up time.
  const { default: pretty } = await import('pino-pretty');
  const prettyLines = pretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: 'pid,hostname' });
  return plain(pino(options, prettyLines), prettyLines);
}

/**
 * The loggers made here with their destinations: their options are known (no base, mixin, hooks,
 * formatters or serializers), so a line of fixed shape may be built by hand and written to the same
 * destination (request-line.ts). Their children and other loggers are not in it.
 */
const plainLoggers = new WeakMap<Logger, DestinationStream>();

function plain(logger: Logger, destination: DestinationStream): Logger {
  // A destination that wants each line's level and object beside it (pino's multistream) gets them
  // only from pino's own write.
  if ((destination as unknown as Record<symbol, unknown>)[symbols.needsMetadataGsym] !== true) plainLoggers.set(logger, destination);
  return logger;
}

/** Where this logger's lines go, when createLogger made it; else undefined. */
export function plainJsonDestination(logger: Logger): DestinationStream | undefined {
  return plainLoggers.get(logger);
}

/** A logger that writes nowhere (servers built without observability: tests, embedders). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
