// Test helper: a TCP relay in front of Postgres that a test can cut (the server goes away under open
// connections) or hang (a network partition: nothing gets through in either direction, new connections are
// accepted and left waiting) and then heal (what was held is delivered, as TCP would after a partition).
import { createServer, type Socket, connect as tcpConnect } from "node:net";

export interface Relay {
  /** The database URL through the relay. */
  url: string;
  hang(): void;
  heal(): void;
  /** Connections its clients hold open; a client's close counts at once, even while hung. */
  clients(): number;
  /** Closes every connection and the listener; a second call is harmless. */
  cut(): Promise<void>;
}

export async function relayTo(url: string): Promise<Relay> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  /** Clients that came while hung, not yet joined to the server. */
  const waiting: Socket[] = [];
  /** While hung a client is still read, as its own kernel would accept its writes: the bytes wait here. */
  const heldBytes = new Map<Socket, { chunks: Buffer[]; take: (b: Buffer) => void }>();
  let hung = false;

  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const hold = (client: Socket) => {
    const chunks: Buffer[] = [];
    const take = (b: Buffer) => void chunks.push(b);
    heldBytes.set(client, { chunks, take });
    client.on("data", take);
    client.resume(); // unpipe() left it paused, and a data listener alone does not resume it
  };
  const release = (client: Socket): Buffer[] => {
    const h = heldBytes.get(client);
    if (!h) return [];
    client.off("data", h.take);
    client.pause(); // until piped again: nothing read meanwhile is lost
    heldBytes.delete(client);
    return h.chunks;
  };
  const join = (client: Socket, first: Buffer[] = []) => {
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
    for (const b of first) upstream.write(b);
    client.pipe(upstream).pipe(client);
  };

  const server = createServer((client) => {
    track(client);
    clients.add(client);
    client.on("close", () => clients.delete(client));
    if (hung) {
      hold(client);
      waiting.push(client);
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
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.pause();
        hold(client);
      }
    },
    heal() {
      hung = false;
      for (const [client, upstream] of pairs) {
        const chunks = release(client);
        // A side closed meanwhile: its peer learns it now, as a reset would reach it once the network is back.
        if (client.destroyed || upstream.destroyed) {
          client.destroy();
          upstream.destroy();
        } else {
          for (const b of chunks) upstream.write(b);
          client.pipe(upstream).pipe(client);
        }
      }
      for (const client of waiting.splice(0)) {
        const chunks = release(client);
        if (!client.destroyed) join(client, chunks);
      }
    },
    clients: () => clients.size,
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
