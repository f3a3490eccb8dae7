// A loopback TCP proxy in front of a real service (PostgreSQL, Redis) that a test can cut and
// restore: cut() drops every open connection and refuses new ones, as a stopped server looks to a
// client; stall() keeps connections open but forwards nothing, as a hung server or a silent
// network partition looks; restore() lets connections through again.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections forwarded since start. */
  readonly accepted: number;
  cut(): void;
  stall(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const pairs = new Set<[net.Socket, net.Socket]>();
  let down = false;
  let stalled = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    open.add(client);
    open.add(upstream);
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      pairs.delete(pair);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    if (!stalled) connectPair(pair);
  });
  const connectPair = ([client, upstream]: [net.Socket, net.Socket]) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
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
    stall() {
      stalled = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    restore() {
      down = false;
      if (stalled) {
        stalled = false;
        for (const pair of pairs) connectPair(pair);
      }
    },
    close() {
      down = true;
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
