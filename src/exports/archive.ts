/**
 * The export's archive: a tar file (POSIX ustar, written by tar-stream) of `manifest.json` and one `<kind>.ndjson.gz` per
 * kind of record. Each kind's file is the concatenation of its chunks, each a gzip member of one
 * batch of NDJSON lines (RFC 1952: a gzip file may hold several members, which `gunzip`, `zcat` and
 * Node's zlib read as one stream), so a batch is compressed and stored on its own and the job
 * resumes after any chunk. The archive is assembled when it is downloaded, chunk after chunk: the
 * sizes of the files are known from the chunks, so each tar header comes first without holding a file.
 * (archiver, which wraps tar-stream, reads a whole stream into memory when no file's `fs.Stats` gives its size:
 * docs/decisions.md.)
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';

const compress = promisify(gzip);

/** How long a completed (or failed) export is kept, in days: its archive is purged after. */
export const exportRetentionDays = 7;

/** The version of the archive's layout, in its manifest. */
export const archiveFormat = 1;

/**
 * One chunk: the NDJSON text of a batch (each line ended by `\n`) as a gzip member (an empty batch
 * still makes a valid, empty one), compressed in libuv's thread pool, not in the thread that answers requests.
 */
export function chunkOf(lines: string): Promise<Buffer> {
  return compress(lines);
}

/** The file name of a kind in the archive. */
export const fileOf = (kind: string) => `${kind}.ndjson.gz`;

/** A tar block: each file's header is one, its content is padded to whole ones, and two empty ones end the archive. */
const block = 512;

/** The size of a file in the archive with its header and padding (ustar: names of at most 100 bytes, no extended header). */
const tarEntrySize = (size: number): number => block + Math.ceil(size / block) * block;

export interface ArchiveFile {
  kind: string;
  bytes: number;
  records: number;
}

/** The manifest: the format, the organization and export, and each file with its records, in the order to rebuild them. */
export function manifestOf(job: { id: string; orgId: string; completedAt: string | null }, files: readonly ArchiveFile[]): Buffer {
  return Buffer.from(
    `${JSON.stringify(
      {
        format: archiveFormat,
        exportId: job.id,
        orgId: job.orgId,
        exportedAt: job.completedAt,
        files: files.map((file) => ({ name: fileOf(file.kind), kind: file.kind, records: file.records })),
      },
      null,
      2,
    )}\n`,
  );
}

/** The whole archive's size, for its `Content-Length`: the manifest, every file, and the end. */
export const archiveSize = (manifest: Buffer, files: readonly ArchiveFile[]): number =>
  tarEntrySize(manifest.length) + files.reduce((total, file) => total + tarEntrySize(file.bytes), 0) + 2 * block;

/** One stored chunk of a file: its kind and bytes, in the order written. */
export interface StoredChunk {
  kind: string;
  data: Buffer;
}

/** The archive was destroyed (the client went, or an entry failed): stop reading chunks. */
class ArchiveClosed extends Error {}

type Entry = ReturnType<Pack['entry']>;

/**
 * Resolves once `entry` emits `event` or closes; throws when the archive is being destroyed (its
 * reader went, or an entry failed, which destroys the archive too; tar-stream's streams tell it at once,
 * before they close), so that no wait outlives it.
 */
async function until(pack: Pack, entry: Entry, event: 'drain' | 'finish'): Promise<void> {
  if (pack.destroying) throw new ArchiveClosed();
  await new Promise<void>((resolve) => {
    const done = () => {
      entry.off(event, done);
      entry.off('close', done);
      resolve();
    };
    entry.on(event, done);
    entry.on('close', done);
  });
  if (pack.destroying) throw new ArchiveClosed();
}

/**
 * The archive, as its parts: the manifest, then each kind's file from `chunks` (each kind's chunks one
 * after the other, in the order of `files`), holding one chunk at a time: tar-stream takes a chunk
 * only when the reader has taken the previous ones. A file whose chunks do not add up to its size
 * fails the archive (tar-stream checks it), which the reader sees as an error.
 */
export function archiveOf(manifest: Buffer, files: readonly ArchiveFile[], chunks: AsyncIterable<StoredChunk>, modified: Date): AsyncIterable<Buffer> {
  const pack = tarPack();
  const open = (name: string, size: number) => {
    const entry = pack.entry({ name, size, mtime: modified, mode: 0o644 });
    // An entry's failure destroys the archive with that error, which its reader gets: nothing more to do here.
    entry.on('error', () => undefined);
    return entry;
  };
  const write = async () => {
    pack.entry({ name: 'manifest.json', mtime: modified, mode: 0o644 }, manifest);
    let file = -1;
    let entry: Entry | undefined;
    const close = async () => {
      if (!entry) return;
      entry.end(undefined); // streamx types `end` with a last chunk; none here
      await until(pack, entry, 'finish');
    };
    for await (const chunk of chunks) {
      if (file < 0 || files[file]!.kind !== chunk.kind) {
        await close();
        file += 1;
        const next = files[file];
        if (next?.kind !== chunk.kind) throw new Error(`a chunk of ${chunk.kind} out of the order of the archive's files`);
        entry = open(fileOf(next.kind), next.bytes);
      }
      if (!entry!.write(chunk.data)) await until(pack, entry!, 'drain');
    }
    await close();
    pack.finalize();
  };
  write().catch((error: unknown) => {
    if (!(error instanceof ArchiveClosed)) pack.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  // Its parts are Buffers (tar-stream's b4a on Node); a reader that stops early destroys it.
  return pack as AsyncIterable<Buffer>;
}
