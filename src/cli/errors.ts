// Exit codes of the `tribunal` command and the one error type that carries them. Every failure a
// user can cause or meet ends as one line on stderr and one of these codes, never a stack trace.
// The table is documented in docs/CLI.md; keep the two in step.
export const EXIT = {
  ok: 0,
  /** --fail-under: an evaluator's mean score is below the threshold. */
  gate: 1,
  /** Unknown command or flag, missing argument, unreadable input file. */
  usage: 2,
  /** The server cannot be reached (connection refused, unknown host, timeout, not a Tribunal server). */
  connection: 3,
  /** The API key is missing, wrong, revoked or expired (401), or not allowed to do this (403). */
  auth: 4,
  /** The judge, evaluator, project or log does not exist or is not visible to the key (404). */
  notFound: 5,
  /** The server stopped answering during a batch; the results so far are kept (resume with --resume). */
  connectionLost: 6,
  /** The server refused the request (400, 409, 413, 429 after retries) or failed (5xx, judge model down). */
  rejected: 7,
  /** A batch finished, but some rows were not scored (bad rows or rows the server refused). */
  partial: 8,
  /** Generation needs an answer (a stage, a missing context) and there is no terminal to ask on. */
  inputNeeded: 9,
  /** Interrupted (Ctrl-C); a batch keeps its results so far. */
  interrupted: 130,
} as const;

export class CliError extends Error {
  readonly exitCode: number;
  /** The server's problem code, when the server answered with one. */
  readonly code?: string;
  readonly status?: number;
  /** Extra members of the problem body (e.g. a generation outcome), for --json output. */
  readonly body?: unknown;

  constructor(exitCode: number, message: string, opts: { code?: string; status?: number; body?: unknown } = {}) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = opts.code;
    this.status = opts.status;
    this.body = opts.body;
  }
}

export const usageError = (message: string) => new CliError(EXIT.usage, message);
