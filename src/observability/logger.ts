// JSON lines through pino; pretty lines for a person at a terminal. What gets logged is chosen
// field by field by the callers (no request or response bodies, no headers); the redaction paths
// are a second net for anything that names a secret.
import { pino, type DestinationStream, type Logger } from 'pino';
import { LineBatch } from './line-batch.ts';

export type { Logger };

export interface LoggerSettings {
  logLevel: string;
  /** Undefined: pretty exactly when stdout is a terminal. */
  logPretty?: boolean;
}

// Top-level names only: wildcard paths doubled the CPU of every log line (measured: 6.2 -> 13.8 us).
const REDACTED_PATHS = ['authorization', 'cookie', 'api_key', 'apiKey', 'token', 'password', 'headers.authorization', 'headers.cookie'];

export async function createLogger(settings: LoggerSettings, destination?: DestinationStream): Promise<Logger> {
  const options = {
    level: settings.logLevel,
    base: undefined, // no pid/hostname on every line: the platform adds its own
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  const wantsPretty = settings.logPretty ?? process.stdout.isTTY === true;
  // Lines are written 16 KiB at a time, at least every second and at exit (line-batch.ts): one
  // write(2) per request and per model call was a measurable share of a judge run's CPU.
  if (!wantsPretty) return pino(options, new LineBatch(1));
  // Loaded only when wanted: a server logging JSON does not pay its start-up time.
  const { default: pretty } = await import('pino-pretty');
  return pino(options, pretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: 'pid,hostname' }));
}

/** A logger that writes nowhere (servers built without observability: tests, embedders). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
