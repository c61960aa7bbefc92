// Test helper: a TCP relay in front of Postgres that a test can cut (the server goes away under open
// connections) or hang (a network partition: sockets stay open, nothing gets through, new connections are
// accepted and left waiting) and then heal (what was held is delivered, as TCP would after a partition).
import { createServer, type Socket, connect as tcpConnect } from "node:net";

export interface Relay {
  /** The database URL through the relay. */
  url: string;
  hang(): void;
  heal(): void;
  /** Closes every connection and the listener; a second call is harmless. */
  cut(): Promise<void>;
}

export async function relayTo(url: string): Promise<Relay> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let hung = false;
  const held: Socket[] = [];
  const pairs = new Set<[Socket, Socket]>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const join = (client: Socket) => {
    const upstream = tcpConnect(Number(target.port), target.hostname);
    track(upstream);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    // One side closing closes the other, as it would end-to-end (a refused upstream is a refused client);
    // while hung the close is held back, and heal() delivers it.
    const closed = () => {
      if (!hung) {
        client.destroy();
        upstream.destroy();
      }
      if (client.destroyed && upstream.destroyed) pairs.delete(pair);
    };
    client.on("close", closed);
    upstream.on("close", closed);
    client.pipe(upstream).pipe(client);
  };
  const server = createServer((client) => {
    track(client);
    if (hung) {
      client.pause();
      held.push(client);
    } else join(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const relayed = new URL(url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((server.address() as { port: number }).port);
  return {
    url: relayed.toString(),
    hang() {
      hung = true;
      for (const [a, b] of pairs) {
        a.unpipe(b);
        b.unpipe(a);
        a.pause();
        b.pause();
      }
    },
    heal() {
      hung = false;
      for (const [a, b] of pairs) {
        // A side closed meanwhile: its peer learns it now, as a reset would reach it once the network is back.
        if (a.destroyed || b.destroyed) {
          a.destroy();
          b.destroy();
        } else a.pipe(b).pipe(a);
      }
      for (const client of held.splice(0)) if (!client.destroyed) join(client);
    },
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
