// The process's log, for what happens outside a request: batch work, demo purges, store reconnects,
// unexpected errors. main.ts points it at the server's logger (JSON lines or pretty, with redaction)
// at start; until then, and in processes that never set one (tests, the CLI, embedders), lines go
// to stderr as plain text, so nothing is dropped silently.
export interface LogSink {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const toStderr = (fields: object, message: string) => {
  const err = (fields as { err?: unknown }).err;
  console.error(`[tribunal] ${message}${err instanceof Error && err.stack ? `\n${err.stack}` : ''}`);
};
const STDERR: LogSink = { info: toStderr, warn: toStderr, error: toStderr };

let sink: LogSink = STDERR;

/** Sends every later line to `logger` (a pino logger fits); null goes back to stderr. */
export function setProcessLogger(logger: LogSink | null): void {
  sink = logger ?? STDERR;
}

/** `fields` are structured (pino's first argument): put an Error under `err`. */
export const log = {
  info: (message: string, fields: object = {}) => sink.info(fields, message),
  warn: (message: string, fields: object = {}) => sink.warn(fields, message),
  error: (message: string, fields: object = {}) => sink.error(fields, message),
};
