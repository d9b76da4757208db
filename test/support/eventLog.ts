import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';

/** Whether the worker has fanned every committed event of the log out into deliveries (pings need none). */
export async function fannedOut(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ left: boolean }>`
    select exists (
      select 1 from webhook_events e, webhook_fanout f
      where (e.txid, e.position) > (f.last_txid, f.last_position) and e.type <> 'webhook.ping'
    ) as left
  `.execute(db);
  return !rows[0]!.left;
}
