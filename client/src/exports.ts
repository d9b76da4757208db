/**
 * An organization's export (`client.exports`): start it, wait for it with its progress, download its
 * archive as a stream (a tar of `manifest.json` and one gzip NDJSON file per kind of record).
 *
 *   const started = await client.exports.start(orgId);
 *   const done = await client.exports.wait(orgId, started.id, { onProgress: (job) => console.log(job.recordsDone, '/', job.recordsTotal) });
 *   const archive = await client.exports.download(orgId, done.id); // a ReadableStream<Uint8Array>
 */
import type { components } from '../../generated/api.js';
import { TeamOsError } from './errors.js';

export type OrgExport = components['schemas']['OrgExport'];

export interface WaitOptions {
  /** Told each time the export is read while it runs (its `recordsDone` of `recordsTotal`). */
  onProgress?: (job: OrgExport) => void;
  /** Time between two reads; 1000 ms unless given. */
  intervalMs?: number;
  /** Stops waiting (the promise rejects with its reason). */
  signal?: AbortSignal;
}

export interface ExportsClient {
  /** Starts an export of the organization (Owners only), or answers the one already QUEUED or RUNNING. */
  start(orgId: string): Promise<OrgExport>;
  /** The export's state and progress. */
  get(orgId: string, exportId: string): Promise<OrgExport>;
  /**
   * Reads the export until it has ended: the COMPLETED export, or `ExportFailed` (with the export and
   * its `failure`) when it FAILED; start a new one to try again.
   */
  wait(orgId: string, exportId: string, options?: WaitOptions): Promise<OrgExport>;
  /** The archive of a COMPLETED export, as the server streams it; `TeamOsError` for an error answer (422 while not COMPLETED). */
  download(orgId: string, exportId: string, options?: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>>;
}

/** An export that ended FAILED: `job.failure` says why. */
export class ExportFailed extends Error {
  override readonly name = 'ExportFailed';
  constructor(readonly job: OrgExport) {
    super(`the export ${job.id} failed: ${job.failure ?? 'no reason given'}`);
  }
}

const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/**
 * The helpers over the client's own calls (`call` answers the JSON of an operation, throwing
 * `TeamOsError`) and, for the download, one plain request outside the retries, which would read the
 * whole archive into memory.
 */
export function exportsClient(
  call: { start(orgId: string): Promise<OrgExport>; get(orgId: string, exportId: string): Promise<OrgExport> },
  stream: (path: string, signal: AbortSignal | undefined) => Promise<Response>,
): ExportsClient {
  return {
    start: call.start,
    get: call.get,
    async wait(orgId, exportId, options = {}) {
      for (;;) {
        const job = await call.get(orgId, exportId);
        if (job.state === 'COMPLETED') return job;
        if (job.state === 'FAILED') throw new ExportFailed(job);
        options.onProgress?.(job);
        await pause(options.intervalMs ?? 1000, options.signal);
      }
    },
    async download(orgId, exportId, options = {}) {
      const response = await stream(`/orgs/${encodeURIComponent(orgId)}/exports/${encodeURIComponent(exportId)}/archive`, options.signal);
      if (!response.ok || response.body === null) {
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not the API's error format (a proxy's page): kept as text.
        }
        throw new TeamOsError(response, body);
      }
      return response.body;
    },
  };
}
