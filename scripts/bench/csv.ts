/**
 * CSV out and in (issue 45): the whole task list of the seeded team exported as one CSV file (a
 * million tasks on PostgreSQL), read by a client as fast as it takes it, with the server's memory
 * sampled meanwhile; then a 10,000-row import of the same columns into another team, as a dry run and
 * for real. The server runs in this process, so the heap sampled is the server's plus a client that
 * only counts bytes.
 */
import { randomBytes } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { atMost, listen, reported, type Check, type Result } from './harness.js';
import type { Stack } from './seed.js';
import { apiOf } from './seed.js';

const MB = 1024 * 1024;

// A full collection on demand, without starting the bench with `--expose-gc`.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const importRows = 10_000;

/**
 * Streams `path` to the end, counting bytes and line ends; the heap and resident set sampled every
 * 20 ms, and the live heap (after a full collection) every second: the heap sampled between
 * collections also holds garbage not collected yet, which V8 lets grow with the rate of allocation
 * rather than with what is kept.
 */
async function download(url: string, key: string) {
  collect();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed;
  let peakLive = before.heapUsed;
  let peakRss = before.rss;
  let ticks = 0;
  const sampler = setInterval(() => {
    if (++ticks % 50 === 0) {
      collect();
      peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
    }
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
  }, 20);
  const started = performance.now();
  let bytes = 0;
  let lines = 0;
  try {
    const response = await new Promise<IncomingMessage>((answered, failed) =>
      get(url, { agent: false, headers: { authorization: `Bearer ${key}` } }, answered).on('error', failed),
    );
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    }
  } finally {
    clearInterval(sampler);
  }
  const growth = (peak: number) => (peak - before.heapUsed) / MB;
  return { seconds: (performance.now() - started) / 1000, bytes, rows: lines - 1, heapGrowth: growth(peakHeap), liveGrowth: growth(peakLive), rssGrowth: (peakRss - before.rss) / MB };
}

export async function benchCsv(stack: Stack, taskCount: number, _results: Result[]): Promise<Check[]> {
  const full = await apiOf(stack);
  const api = await listen(full.app);
  const name = (what: string) => `${stack.label}: ${what}`;
  try {
    const { world, db } = stack;
    const exported = await download(`${api.url}/v1/teams/${world.teamId}/tasks/csv`, world.readKey);
    if (exported.rows !== taskCount) throw new Error(`the export holds ${exported.rows} rows of ${taskCount}`);
    console.log(
      `${stack.label}: CSV export of ${taskCount.toLocaleString('en')} tasks, ${(exported.bytes / MB).toFixed(1)} MB in ${exported.seconds.toFixed(1)} s ` +
        `(${Math.round(taskCount / exported.seconds).toLocaleString('en')} rows/s); live heap +${exported.liveGrowth.toFixed(1)} MB, heap with garbage +${exported.heapGrowth.toFixed(1)} MB, resident +${exported.rssGrowth.toFixed(1)} MB at most`,
    );

    // The import: the first 10,000 rows of the export's columns, into a team with the same members.
    const target = await db.insertInto('teams').values({ org_id: world.orgId, name: 'Imports', slug: `imports-${randomBytes(3).toString('hex')}` }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('team_members').values(world.ownerIds.map((ownerId) => ({ team_id: target.id, user_id: ownerId, role: 'MEMBER' as const }))).execute();
    const emails = (await db.selectFrom('users').select('email').where('id', 'in', world.ownerIds).execute()).map((row) => row.email);
    const file = ['title,ownerEmail,dueDate,completed', ...Array.from({ length: importRows }, (_, index) => `Imported task ${index},${emails[index % emails.length]},2026-11-27,${index % 4 === 0}`)].join('\r\n');
    const send = async (query: string) => {
      const started = performance.now();
      const response = await fetch(`${api.url}/v1/teams/${target.id}/tasks/csv${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.writeKey}`, 'content-type': 'text/csv' },
        body: file,
      });
      if (response.status !== 200) throw new Error(`import${query}: ${response.status} ${await response.text()}`);
      return (performance.now() - started) / 1000;
    };
    const dryRun = await send('?dryRun=true');
    const written = await send('');
    console.log(
      `${stack.label}: CSV import of ${importRows.toLocaleString('en')} tasks (${(Buffer.byteLength(file) / MB).toFixed(2)} MB): dry run ${dryRun.toFixed(2)} s, written ${written.toFixed(2)} s, one event`,
    );
    return [
      atMost(
        name(`CSV export of ${taskCount.toLocaleString('en')} tasks: live heap growth, MB`),
        exported.liveGrowth,
        64,
        `${(exported.bytes / MB).toFixed(0)} MB sent in ${exported.seconds.toFixed(1)} s; heap with garbage +${exported.heapGrowth.toFixed(0)} MB`,
      ),
      reported(name('CSV export: rows per second (thousands)'), taskCount / exported.seconds / 1000),
      reported(name(`CSV import of ${importRows.toLocaleString('en')} rows: seconds`), written, `dry run ${dryRun.toFixed(2)} s`),
    ];
  } finally {
    await api.close();
    await full.close();
  }
}
