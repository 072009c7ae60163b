import { DatabaseError } from 'pg';

/**
 * Why a PostgreSQL store could not be opened, as one line for someone starting gridco2: `where`
 * names the setting and the URL (password hidden). Only a DatabaseError comes from the server
 * itself; anything else (refused, unknown host, timeout, TLS) means it was never reached.
 */
export function describeOpenFailure(error: unknown, where: string): string {
  const reason = error instanceof Error ? error.message : String(error);
  if (!(error instanceof DatabaseError)) {
    return `cannot reach the database at ${where} (${reason}): check that PostgreSQL runs there`;
  }
  // Class 28: invalid authorization; 3D000: no such database.
  if (error.code?.startsWith('28') || error.code === '3D000') {
    return (
      `the database at ${where} refused the login (${reason}): ` +
      'check the user, password and database name'
    );
  }
  return `cannot open the database at ${where}: ${reason}`;
}
