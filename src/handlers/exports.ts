/** Handlers of the Exports area: an organization's export as a job, its state, and its archive. */
import { once } from 'node:events';
import type { Response } from 'express';
import type { Kysely } from 'kysely';
import { locationOf } from '../api/location.js';
import { StreamBody } from '../api/streamBody.js';
import { loadOrganizationAccess } from '../auth/access.js';
import type { Caller } from '../auth/caller.js';
import { requireActive, requireOwner } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import * as exports from '../db/queries/exports.js';
import { NotFound, RuleViolation } from '../errors.js';
import { archiveSize, fileOf, manifestOf, tarEnd, tarHeader, tarPadding } from '../exports/archive.js';
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

/** Writes `bytes`, waiting while the connection's buffer is full; false once the client has gone. */
async function send(res: Response, bytes: Buffer): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(bytes)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
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
        if (!(await send(res, Buffer.concat([tarHeader('manifest.json', manifest.length, modified), manifest, tarPadding(manifest.length)])))) return;
        let file = -1;
        let after = -1;
        for (;;) {
          const chunks = await exports.chunksAfter(db, job.id, after, chunksPerRead);
          for (const chunk of chunks) {
            if (file < 0 || files[file]!.kind !== chunk.kind) {
              if (file >= 0 && !(await send(res, tarPadding(files[file]!.bytes)))) return;
              file += 1;
              if (!(await send(res, tarHeader(fileOf(files[file]!.kind), files[file]!.bytes, modified)))) return;
            }
            if (!(await send(res, chunk.data))) return;
            after = chunk.seq;
          }
          if (chunks.length < chunksPerRead) break;
        }
        if (file >= 0 && !(await send(res, tarPadding(files[file]!.bytes)))) return;
        res.end(tarEnd());
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
