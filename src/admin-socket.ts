// While a server owns a JSON data directory, `tribunal keys ...` cannot open it (one writer only),
// so the server listens on a Unix socket beside its data and runs key commands for the CLI there.
// Only local users who can reach the socket file (mode 0600, owner only) can use it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KeyCommandError, runKeyCommand, type KeyCommand } from './key-commands.ts';
import type { Services } from './tool.ts';

function socketPath(dataDir: string): string {
  const preferred = path.join(dataDir, 'admin.sock');
  // Unix socket paths are limited to ~107 bytes; fall back to a per-directory name in the temp dir.
  if (Buffer.byteLength(preferred) < 100) return preferred;
  return path.join(os.tmpdir(), `tribunal-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.sock`);
}

export async function startAdminSocket(services: Services, file: string): Promise<{ close: () => Promise<void> }> {
  fs.rmSync(file, { force: true }); // left over from a crash; we hold the data-dir lock, so it is ours
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
          const result = await runKeyCommand(services.store, services.config, JSON.parse(line) as KeyCommand);
          conn.end(`${JSON.stringify({ ok: true, result })}\n`);
        } catch (err) {
          const code = err instanceof KeyCommandError ? err.code : undefined;
          conn.end(`${JSON.stringify({ ok: false, error: (err as Error).message, code })}\n`);
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
}
startAdminSocket.pathFor = socketPath;

/** Sends one command to a running server's admin socket. */
export function sendAdminCommand(file: string, command: KeyCommand, timeoutMs = 10_000): Promise<unknown> {
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
        const answer = JSON.parse(buffer) as { ok: boolean; result?: unknown; error?: string; code?: KeyCommandError['code'] };
        if (answer.ok) resolve(answer.result);
        else reject(answer.code ? new KeyCommandError(answer.code, answer.error ?? '') : new Error(answer.error));
      } catch {
        reject(new Error('The server answered something unreadable on its admin socket.'));
      }
    });
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
