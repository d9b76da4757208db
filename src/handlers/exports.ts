/** Handlers of the Exports area: an organization's export as a job, its state, and its archive. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { locationOf } from '../api/location.js';
import { StreamBody } from '../api/streamBody.js';
import { loadOrganizationAccess } from '../auth/access.js';
import type { Caller } from '../auth/caller.js';
import { requireActive, requireOwner } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import * as exports from '../db/queries/exports.js';
import { NotFound, RuleViolation } from '../errors.js';
import { archiveOf, archiveSize, manifestOf } from '../exports/archive.js';
import { toOrgExport } from '../records/exports.js';
import type { AreaHandlers, Handler } from './types.js';

/** Chunks read per statement while the archive is sent: a few hundred KB at most in memory. */
const chunksPerRead = 8;

async function ownerOf(db: Kysely<Database>, caller: Caller, orgId: string) {
  const access = await loadOrganizationAccess(db, caller, orgId, 'administration');
  requireOwner(access);
  return access;
}

/** The export, while it is kept: past `expiresAt` it is gone (404), whether or not the purge has deleted it yet. */
async function findJob(db: Kysely<Database>, orgId: string, exportId: string, now: Date) {
  const job = await exports.findExport(db, orgId, exportId);
  if (!job || (job.expires_at !== null && job.expires_at <= now)) throw new NotFound();
  return job;
}

export const startOrgExport: Handler<'startOrgExport'> = async ({ params }, { db, caller }) => {
  // Starting one is a change like any other: a suspended organization refuses it (its exports made before stay downloadable).
  requireActive(await ownerOf(db, caller, params.orgId));
  const { job } = await exports.startExport(db, params.orgId);
  return {
    status: 202,
    body: toOrgExport(job),
    headers: { Location: locationOf('/orgs/{orgId}/exports/{exportId}', { orgId: params.orgId, exportId: job.id }) },
  };
};

export const getOrgExport: Handler<'getOrgExport'> = async ({ params }, { db, caller, now }) => {
  await ownerOf(db, caller, params.orgId);
  return { status: 200, body: toOrgExport(await findJob(db, params.orgId, params.exportId, now())) };
};

/** The archive's chunks in the order written, `chunksPerRead` per statement. */
async function* storedChunks(db: Kysely<Database>, exportId: string) {
  let after = -1;
  for (;;) {
    const chunks = await exports.chunksAfter(db, exportId, after, chunksPerRead);
    yield* chunks;
    if (chunks.length < chunksPerRead) return;
    after = chunks.at(-1)!.seq;
  }
}

export const downloadOrgExport: Handler<'downloadOrgExport'> = async ({ params }, { db, caller, now }) => {
  await ownerOf(db, caller, params.orgId);
  const job = await findJob(db, params.orgId, params.exportId, now());
  if (job.state !== 'COMPLETED') throw new RuleViolation(`the export is ${job.state}: only a COMPLETED export can be downloaded`);
  const files = await exports.archiveFiles(db, job.id);
  const record = toOrgExport(job);
  const manifest = manifestOf(record, files);
  const modified = job.completed_at ?? job.created_at;
  return {
    status: 200,
    body: new StreamBody(async (_req, res) => {
      res.status(200);
      res.setHeader('Content-Type', 'application/x-tar');
      res.setHeader('Content-Disposition', `attachment; filename="export-${job.id}.tar"`);
      res.setHeader('Content-Length', String(archiveSize(manifest, files)));
      try {
        // As fast as the client reads; when it goes, pipeline stops the archive and so its reads.
        await pipeline(Readable.from(archiveOf(manifest, files, storedChunks(db, job.id), modified), { objectMode: false }), res);
      } catch (error) {
        // The head is sent: a failure can only cut the answer short, which the client sees as such.
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    }),
  };
};

export const exportsHandlers: AreaHandlers<'Exports'> = {
  startOrgExport,
  getOrgExport,
  downloadOrgExport,
};
