import { lookup } from 'node:dns/promises';

/** Every address a host name resolves to (an address literal resolves to itself). */
export type ResolveHost = (host: string) => Promise<string[]>;

/** The system resolver, as connections use it: every address, in the resolver's order. */
export const resolveHost: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
