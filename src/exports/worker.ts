/**
 * The export worker inside every server process: it claims a QUEUED export (or a RUNNING one whose
 * lease ran out: its process died) with a lease, as webhook deliveries are claimed, and writes its
 * archive into the database (src/exports/archive.ts), one kind of record after the other, in keyset
 * batches, one job at a time per process.
 *
 * Every batch is read in a statement of its own and written, with the job's new position, in one
 * statement guarded by the lease's token (`appendChunk`): a worker that lost its job writes nothing
 * more, and the one that claims it resumes after the last chunk written, so each record is in the
 * archive once. The export is not a snapshot of one instant (a transaction held open for the whole
 * export would hold the only connection of PGlite and every request behind it): each kind is read as
 * it is when its batches run, in the order of its key, so a record created during the export may be
 * in it, and one deleted may be missing, but none twice.
 *
 * It never holds a lock a change waits on: its reads take none, and its writes touch only its job's
 * row and chunks. The database writes each batch's NDJSON lines (this thread gets one string, not a
 * row per record to parse and write again), it compresses in libuv's thread pool, and after each batch
 * it rests as long as the batch took (twice as long where the database runs in this thread, PGlite, as
 * the event log's purge does).
 * The same loop purges expired exports, a few chunks at a time.
 */
import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database, OrgExportPosition, OrgExportRow } from '../db/database.js';
import {
  appendChunk,
  claimExport,
  completeExport,
  exportedColumns,
  exportKinds,
  failExport,
  purgeExpiredExports,
  recordBatch,
  recordTotal,
  releaseExport,
  renewExportLease,
  setExportTotal,
} from '../db/queries/exports.js';
import { inTransaction } from '../db/transaction.js';
import { eventText } from '../events/outbox.js';
import { loggableError } from '../logger.js';
import { toOrgExport } from '../records/exports.js';
import { chunkOf, exportRetentionDays } from './archive.js';

/** How long a claim holds an export unless renewed: how long a killed process's export waits for another. */
export const defaultExportLeaseMs = 30_000;
/** Export attempts before it is failed: a job that kills its process every time must not do so forever. */
export const maxExportAttempts = 5;
/**
 * Records per batch (one statement, one chunk); smaller where the database runs in this thread. Each
 * batch is a burst of the database's CPU that a change running at that moment shares: of 500 records,
 * a change's p99 during an export of 200,000 was 1.5 × without; of 250, 1.0 × (docs/performance.md).
 * On PGlite a change waits for the whole batch: of 100, 1.55 ×; of 50, 0.91 and 1.31 ×.
 */
const batchSize = 250;
const inThreadBatchSize = 50;
const purgeEveryMs = 10 * 60 * 1000;
const purgeBatch = 50;

export interface ExportWorkerOptions {
  db: Kysely<Database>;
  logger: Logger;
  now: () => Date;
  /** How often to look for a QUEUED export without being woken. */
  pollMs?: number;
  /** How long a claim holds an export unless renewed (EXPORTS_LEASE_MS); renewed every third of it. */
  leaseMs?: number | undefined;
  /** The database runs its statements in this thread (PGlite): smaller batches, with pauses between them. */
  databaseInThread?: boolean;
  /** Records per batch, when not the default (tests make many chunks of a few records). */
  batchSize?: number;
  /** Tests and the bench only: called after each chunk is written, with the job (a test stops a worker mid-export there; the bench pauses it). */
  afterChunk?: (job: OrgExportRow) => Promise<void> | void;
}

export interface ExportWorker {
  /** Looks for a QUEUED export now (after one was started in this process). */
  wake(): void;
  close(): Promise<void>;
}

/** The worker lost its job: its lease ran out and another claimed it, or it is stopping. */
class LeaseLost extends Error {}

/** The reason a job failed, as its `failure` tells it: what went wrong, without the server's internals. */
function reasonOf(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `database error (${code}): ${message}` : `error: ${message}`;
}

/**
 * Runs one claimed job to its end (COMPLETED or FAILED), resuming at its recorded position; throws
 * `LeaseLost` when the job is no longer its (then it stops without touching it).
 */
async function runJob(options: ExportWorkerOptions, job: OrgExportRow, stopped: () => boolean): Promise<void> {
  const { db, now } = options;
  const token = job.lease_token!;
  const limit = options.batchSize ?? (options.databaseInThread ? inThreadBatchSize : batchSize);
  const owned = (still: boolean) => {
    if (!still || stopped()) throw new LeaseLost();
  };
  if (job.records_total === null) owned(await setExportTotal(db, job.id, token, await recordTotal(db, job.org_id)));

  const start = job.position?.kind ?? exportKinds[0]!.name;
  let index = start === '' ? exportKinds.length : exportKinds.findIndex((kind) => kind.name === start);
  let after = job.position?.after ?? null;
  let columns: { kind: string; names: string[] } | undefined;
  while (index < exportKinds.length) {
    const kind = exportKinds[index]!;
    const next = exportKinds[index + 1]?.name ?? '';
    const started = performance.now();
    if (columns?.kind !== kind.name) columns = { kind: kind.name, names: await exportedColumns(db, kind) };
    const batch = await recordBatch(db, kind, columns.names, job.org_id, after, limit);
    const last = batch.records < limit;
    // A kind's last batch moves the position to the next kind; an empty kind still gets its (empty) file.
    const position: OrgExportPosition = last ? { kind: next, after: null } : { kind: kind.name, after: batch.last };
    const data = batch.records > 0 || after === null ? await chunkOf(batch.lines) : null;
    owned(await appendChunk(db, { exportId: job.id, token, kind: kind.name, records: batch.records, data, position }));
    const took = performance.now() - started;
    await options.afterChunk?.(job);
    if (last) index += 1;
    after = position.after;
    // The API first: after each batch the worker rests as long as the batch took (twice as long where the
    // database shares this thread), so an export takes at most half of what the process and its
    // database can give. Without the rest, a change's p99 on PostgreSQL was 1.6 × as long during an export.
    await new Promise((resume) => setTimeout(resume, (options.databaseInThread ? 2 : 1) * took));
  }

  const at = now();
  const completed = await inTransaction(db, (trx) =>
    completeExport(trx, { exportId: job.id, token, now: at, expiresAt: new Date(at.getTime() + exportRetentionDays * 86_400_000) }, (row) => {
      const id = randomUUID();
      return { id, orgId: row.org_id, teamId: null, type: 'export.completed', event: eventText(id, 'export.completed', at, { orgId: row.org_id, teamId: null, object: toOrgExport(row) }) };
    }),
  );
  owned(completed);
}

/**
 * Claims and runs exports until none is due or `stopped()`: how many it finished. A job that failed
 * is marked FAILED with its reason; one whose process died is claimed again by this or another
 * worker once its lease runs out, and failed after `maxExportAttempts`.
 */
export async function runDueExports(options: ExportWorkerOptions, stopped: () => boolean = () => false): Promise<number> {
  const { db, now, logger } = options;
  const leaseMs = options.leaseMs ?? defaultExportLeaseMs;
  let finished = 0;
  while (!stopped()) {
    const job = await claimExport(db, now(), leaseMs);
    if (!job) return finished;
    const token = job.lease_token!;
    const expiresAt = () => new Date(now().getTime() + exportRetentionDays * 86_400_000);
    if (job.attempts > maxExportAttempts) {
      await failExport(db, { exportId: job.id, token, reason: `stopped after ${maxExportAttempts} attempts: each ended with its server`, now: now(), expiresAt: expiresAt() });
      continue;
    }
    let renewing: Promise<unknown> | undefined;
    const renew = setInterval(() => {
      renewing ??= renewExportLease(db, job.id, token, new Date(now().getTime() + leaseMs))
        .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not renew the lease of an export'))
        .finally(() => (renewing = undefined));
    }, leaseMs / 3);
    renew.unref();
    try {
      await runJob(options, job, stopped);
      finished += 1;
    } catch (error) {
      if (error instanceof LeaseLost) {
        if (stopped()) await releaseExport(db, job.id, token).catch(() => undefined);
        continue;
      }
      logger.warn({ err: loggableError(error), exportId: job.id }, 'an export failed');
      await failExport(db, { exportId: job.id, token, reason: reasonOf(error), now: now(), expiresAt: expiresAt() }).catch((failed: unknown) =>
        logger.warn({ err: loggableError(failed), exportId: job.id }, 'could not record the failure of an export; another claim retries it'),
      );
    } finally {
      clearInterval(renew);
      await renewing;
    }
  }
  return finished;
}

export function startExportWorker(options: ExportWorkerOptions): ExportWorker {
  const { db, logger, now } = options;
  const pollMs = options.pollMs ?? 1000;
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(tickInOwnContext, ms);
    timer.unref();
  };
  async function tick(): Promise<void> {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = runDueExports(options, () => closed)
      .then(() => undefined)
      .catch((error: unknown) => {
        if (!closed) logger.warn({ err: loggableError(error) }, 'could not claim exports');
      });
    await running;
    running = undefined;
    schedule(again ? 0 : pollMs);
  }
  // In the worker's own context even when a request wakes it: the export is not that request's work.
  const tickInOwnContext = AsyncResource.bind(() => void tick());

  const purge = setInterval(() => {
    void (async () => {
      while (!closed && (await purgeExpiredExports(db, now(), purgeBatch)) > 0) await new Promise((resume) => setImmediate(resume));
    })().catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not purge expired exports'));
  }, purgeEveryMs);
  purge.unref();
  schedule(0);

  return {
    wake: tickInOwnContext,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(purge);
      await running;
    },
  };
}
