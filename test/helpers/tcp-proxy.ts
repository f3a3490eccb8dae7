// A loopback TCP proxy in front of a real service (PostgreSQL, Redis) that a test can cut and
// restore: cut() drops every open connection and refuses new ones, as a network partition or a
// stopped server looks to a client; restore() lets connections through again.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections forwarded since start. */
  readonly accepted: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let down = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    cut() {
      down = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    close() {
      down = true;
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
