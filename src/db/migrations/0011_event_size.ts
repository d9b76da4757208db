/**
 * 0011_event_size: every event the log keeps takes at most 64 KB of JSON (src/db/queries/events.ts,
 * `keptEvent`). An event kept larger before — a meeting of many long segues made one of 1.3 MB, which
 * ended every live stream that carried it, at every resume, for as long as the log kept it — is
 * rewritten in its reduced form: its record's short fields (a string, number, boolean or null of at
 * most 1 KB of JSON, each as it was, up to 32 KB), then `"reduced":true` and `kind`.
 *
 * Frozen in time: imports nothing from the application, only `kysely`; the SQL is `keptEvent`'s as
 * it was written with this migration.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update webhook_events e set event = (
      select '{"id":' || (j.v->'id')::text || ',"type":' || (j.v->'type')::text || ',"timestamp":' || (j.v->'timestamp')::text
        || ',"data":{"orgId":' || (j.v->'data'->'orgId')::text || ',"teamId":' || (j.v->'data'->'teamId')::text || ',"object":{'
        || coalesce((
          select string_agg(m.member, ',' order by m.ord) || ',' from (
            select f.ord, to_json(f.key)::text || ':' || f.value::text as member,
              sum(octet_length(f.key) + octet_length(f.value::text) + 4) over (order by f.ord) as kept
            from json_each(j.v->'data'->'object') with ordinality f(key, value, ord)
            where json_typeof(f.value) in ('string', 'number', 'boolean', 'null') and octet_length(f.value::text) <= 1024
          ) m where m.kept <= 32768
        ), '')
        || '"reduced":true,"kind":' || to_json(split_part(j.v->>'type', '.', 1))::text || '}}}'
      from (select e.event::json as v) j
    )
    where octet_length(e.event) > 65536
  `.execute(db);
}

export async function down(): Promise<void> {
  // What the reduced form left out is not kept anywhere: the records' GETs still give it.
}
