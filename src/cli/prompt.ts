// Questions on a terminal. The CLI asks only when stdin is a terminal; without one (CI, a pipe) it
// never waits for input. TRIBUNAL_INTERACTIVE=1 forces questions on a piped stdin (answers one per
// line; used by the tests and by scripts that feed answers), TRIBUNAL_INTERACTIVE=0 forbids them.
import readline from 'node:readline';

export function isInteractive(env: NodeJS.ProcessEnv = process.env): boolean {
  const force = (env.TRIBUNAL_INTERACTIVE ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(force)) return true;
  if (['0', 'false', 'no'].includes(force)) return false;
  return Boolean(process.stdin.isTTY);
}

export class Prompter {
  private rl?: readline.Interface;
  private lines?: AsyncIterator<string>;

  /** Writes the question to stderr and waits for one line; null when input has ended. */
  async ask(question: string): Promise<string | null> {
    if (!this.rl) {
      this.rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: Boolean(process.stdin.isTTY && process.stderr.isTTY) });
      // Iterating buffers lines that arrive before the question (piped answers), unlike rl.question.
      this.lines = this.rl[Symbol.asyncIterator]();
    }
    process.stderr.write(question);
    const next = await this.lines!.next();
    if (next.done) {
      process.stderr.write('\n');
      return null;
    }
    return next.value.trim();
  }

  close(): void {
    this.rl?.close();
    this.rl = undefined;
  }
}

/** Asks a yes/no question; anything but y/yes is no. */
export async function confirm(question: string): Promise<boolean> {
  const p = new Prompter();
  try {
    const answer = await p.ask(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer ?? '');
  } finally {
    p.close();
  }
}
