import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback that can stop forwarding, in both directions, without closing
 * anything: the way a dropped route (a partition) looks to a client. Healing forwards what was
 * held. Used by the Redis partition test and bench.
 *
 * Both of its sockets send at once (TCP_NODELAY), as Redis and ioredis do: with Nagle's
 * algorithm on, a reply written while the previous one was still unacknowledged waited for the
 * client's delayed ACK, which rode on its next command, so once two replies came close together
 * (the held ones when a partition heals) every reply came one request interval late (12.5 ms
 * in the bench) for seconds on end: a latency of the proxy, not of any route it stands for.
 */
export interface PartitionProxy {
  readonly port: number;
  partition(): void;
  heal(): void;
  /** Forwards each chunk `ms` late from now on, both ways (a slower link). */
  slowDown(ms: number): void;
  /** The connections open now, each by its number in the order they were accepted (from 1). */
  openConnections(): number[];
  close(): Promise<void>;
}

interface Pair {
  readonly id: number;
  readonly client: Socket;
  readonly upstream: Socket;
}

/** Forwards 127.0.0.1:<port> to `target` until partitioned. */
export async function startPartitionProxy(target: {
  readonly host: string;
  readonly port: number;
}): Promise<PartitionProxy> {
  const pairs = new Set<Pair>();
  let partitioned = false;
  let latencyMs = 0;
  let accepted = 0;
  const relay = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (latencyMs === 0) to.write(chunk);
      else setTimeout(() => to.write(chunk), latencyMs);
    });
  // Paused sockets leave what arrives in the kernel's buffers, unread, until resumed.
  const forward = ({ client, upstream }: Pair) => {
    client.resume();
    upstream.resume();
  };
  const hold = ({ client, upstream }: Pair) => {
    client.pause();
    upstream.pause();
  };
  const server: Server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ ...target, noDelay: true });
    const pair = { id: ++accepted, client, upstream };
    pairs.add(pair);
    relay(client, upstream);
    relay(upstream, client);
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
        pairs.delete(pair);
      });
    }
    if (partitioned) hold(pair);
    else forward(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    partition: () => {
      partitioned = true;
      for (const pair of pairs) hold(pair);
    },
    heal: () => {
      partitioned = false;
      for (const pair of pairs) forward(pair);
    },
    slowDown: (ms) => {
      latencyMs = ms;
    },
    openConnections: () => [...pairs].map(({ id }) => id),
    close: async () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
