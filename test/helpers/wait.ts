// Waiting in tests: one polling loop and one free-port helper for every test, instead of a copy each.
import net from 'node:net';

/**
 * Calls `fn` until it answers something truthy and answers that; fails naming `what` after
 * `timeoutMs`. `fn` may be synchronous.
 */
export async function until<T>(what: string, fn: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
