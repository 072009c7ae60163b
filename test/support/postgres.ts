import { randomBytes } from 'node:crypto';
import { Client, DatabaseError, escapeIdentifier } from 'pg';

/**
 * Throwaway PostgreSQL databases for test suites, on the local server (trust auth).
 * Each suite creates its own uniquely named database and drops it afterwards, so runs in parallel
 * never share state and never depend on leftovers.
 */

const ADDRESS = '127.0.0.1:5432';

const urlOf = (user: string, database: string) => `postgres://${user}@${ADDRESS}/${database}`;

// Which role and admin database exist depends on the machine: try them in turn.
const ADMIN_LOGINS = ['postgres', 'root'].flatMap((user) =>
  ['postgres', 'test'].map((database) => ({ user, url: urlOf(user, database) })),
);

type Probe = { user: string; url: string } | { unreachable: string };

async function findAdminLogin(): Promise<Probe> {
  const refusals: string[] = [];
  for (const login of ADMIN_LOGINS) {
    const client = new Client({ connectionString: login.url, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      return login;
    } catch (error) {
      // Only a DatabaseError comes from the server itself: it is up but refuses this login.
      if (!(error instanceof DatabaseError)) {
        return { unreachable: error instanceof Error ? error.message : String(error) };
      }
      refusals.push(`${login.url}: ${error.message}`);
    } finally {
      await client.end();
    }
  }
  throw new Error(
    `PostgreSQL at ${ADDRESS} is up but refuses every test login: ${refusals.join('; ')}`,
  );
}

let probe: Promise<Probe> | undefined;
const probeOnce = () => (probe ??= findAdminLogin());

/**
 * Whether a file's PostgreSQL suites run. Outside CI an unreachable server skips them with a
 * one-line warning; under CI=true it throws, so CI never passes without them.
 */
export async function isPostgresAvailable(suite: string): Promise<boolean> {
  const found = await probeOnce();
  if (!('unreachable' in found)) return true;
  const reason = `${ADDRESS} unreachable (${found.unreachable})`;
  if (process.env.CI === 'true') {
    throw new Error(`${suite} cannot be skipped under CI=true: ${reason}`);
  }
  console.warn(`${suite} skipped: ${reason}; CI=true makes this a failure`);
  return false;
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, application_name: 'gridco2-test' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface ThrowawayDatabase {
  readonly name: string;
  readonly url: string;
  /** Runs one statement on the database over a short-lived connection of its own. */
  query<Row extends object>(sql: string, values?: unknown[]): Promise<Row[]>;
  /** Empties the database by recreating the public schema: the next store migrates from zero. */
  resetSchema(): Promise<void>;
  /** Ends every connection to the database, as a server restart would. Returns how many. */
  terminateConnections(): Promise<number>;
  /** Refuses new connections and ends the open ones, until `endOutage`. */
  startOutage(): Promise<void>;
  endOutage(): Promise<void>;
  /** Drops the database, ending whatever is still connected. */
  drop(): Promise<void>;
}

export async function createThrowawayDatabase(): Promise<ThrowawayDatabase> {
  const admin = await probeOnce();
  if ('unreachable' in admin) throw new Error(`PostgreSQL unavailable: ${admin.unreachable}`);
  const name = `gridco2_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const quotedName = escapeIdentifier(name);
  const url = urlOf(admin.user, name);
  const asAdmin = (sql: string, values?: unknown[]) =>
    withClient(admin.url, (client) => client.query(sql, values));
  const setAllowConnections = (allow: boolean) =>
    asAdmin(`ALTER DATABASE ${quotedName} ALLOW_CONNECTIONS ${allow}`);
  const terminateConnections = async () => {
    const { rowCount } = await asAdmin(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    return rowCount ?? 0;
  };

  await asAdmin(`CREATE DATABASE ${quotedName}`);
  return {
    name,
    url,
    query: (sql, values) =>
      withClient(url, async (client) => (await client.query(sql, values)).rows),
    resetSchema: async () => {
      await withClient(url, (client) =>
        client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'),
      );
    },
    terminateConnections,
    startOutage: async () => {
      await setAllowConnections(false);
      await terminateConnections();
    },
    endOutage: async () => {
      await setAllowConnections(true);
    },
    drop: async () => {
      await asAdmin(`DROP DATABASE IF EXISTS ${quotedName} WITH (FORCE)`);
    },
  };
}
