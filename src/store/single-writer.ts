// The JSON store's single-writer capability. One process owns a JSON data directory (lock.ts); while
// a server owns it, other processes (the CLI) cannot open it, so the owner listens on a Unix socket
// beside its data and runs their commands. This module is that channel, and only the channel: what
// the commands are is its users' business (admin-socket.ts serves key commands; the CLI sends them).
// Only local users who can reach the socket file (mode 0600, owner only) can use it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { liveLockOwner } from './lock.ts';

/** A refusal the owner answered with a code (for example `not_found`), kept across the socket. */
export class SingleWriterCommandError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'SingleWriterCommandError';
  }
}

export const singleWriter = {
  /** Where the owner of `dataDir` listens. */
  socketPathFor(dataDir: string): string {
    const preferred = path.join(dataDir, 'admin.sock');
    // Unix socket paths are limited to ~107 bytes; fall back to a per-directory name in the temp dir.
    if (Buffer.byteLength(preferred) < 100) return preferred;
    return path.join(os.tmpdir(), `tribunal-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.sock`);
  },

  /** The socket of the live server that owns `dataDir`, or null when none does (open the store directly). */
  ownerSocket(dataDir: string): string | null {
    const owner = liveLockOwner(dataDir);
    return owner?.role === 'server' && owner.admin_socket ? owner.admin_socket : null;
  },

  /** Serves one JSON command per connection; `run`'s error `code` property travels with its message. */
  async serve(file: string, run: (command: unknown) => Promise<unknown>): Promise<{ close: () => Promise<void> }> {
    fs.rmSync(file, { force: true }); // left over from a crash; the caller holds the data-dir lock, so it is ours
    const server = net.createServer((conn) => {
      let buffer = '';
      conn.setEncoding('utf8');
      conn.on('data', (chunk: string) => {
        buffer += chunk;
        if (buffer.length > 65536) return conn.destroy();
        const end = buffer.indexOf('\n');
        if (end < 0) return;
        const line = buffer.slice(0, end);
        void (async () => {
          try {
            const result = await run(JSON.parse(line));
            conn.end(`${JSON.stringify({ ok: true, result })}\n`);
          } catch (err) {
            const code = (err as { code?: unknown }).code;
            conn.end(`${JSON.stringify({ ok: false, error: (err as Error).message, code: typeof code === 'string' ? code : undefined })}\n`);
          }
        })();
      });
      conn.on('error', () => {});
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => resolve());
    });
    fs.chmodSync(file, 0o600);
    return {
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          fs.rmSync(file, { force: true });
        }),
    };
  },

  /** Sends one command to the owner and answers its result; a refusal rejects with SingleWriterCommandError. */
  send(file: string, command: unknown, timeoutMs = 10_000): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const conn = net.createConnection(file);
      let buffer = '';
      const timer = setTimeout(() => {
        conn.destroy();
        reject(new Error(`The server at ${file} did not answer within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      conn.setEncoding('utf8');
      conn.on('connect', () => conn.write(`${JSON.stringify(command)}\n`));
      conn.on('data', (chunk: string) => (buffer += chunk));
      conn.on('end', () => {
        clearTimeout(timer);
        try {
          const answer = JSON.parse(buffer) as { ok: boolean; result?: unknown; error?: string; code?: string };
          if (answer.ok) resolve(answer.result);
          else reject(new SingleWriterCommandError(answer.code, answer.error ?? ''));
        } catch {
          reject(new Error('The server answered something unreadable on its admin socket.'));
        }
      });
      conn.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  },
};
