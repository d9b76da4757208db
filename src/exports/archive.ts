/**
 * The export's archive: a tar file (POSIX ustar) of `manifest.json` and one `<kind>.ndjson.gz` per
 * kind of record. Each kind's file is the concatenation of its chunks, each a gzip member of one
 * batch of NDJSON lines (RFC 1952: a gzip file may hold several members, which `gunzip`, `zcat` and
 * Node's zlib read as one stream), so a batch is compressed and stored on its own and the job
 * resumes after any chunk. The archive is assembled when it is downloaded, chunk after chunk: the
 * sizes of the files are known from the chunks, so the tar headers come first without holding a file.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const compress = promisify(gzip);

/** How long a completed (or failed) export is kept, in days: its archive is purged after. */
export const exportRetentionDays = 7;

/** The version of the archive's layout, in its manifest. */
export const archiveFormat = 1;

const block = 512;

/** `snake_case` → `camelCase`, for the keys of a record. */
const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());

/** A record as the database wrote it (JSON text with its column names) → its NDJSON line, with the API's camelCase names. */
export function recordLine(record: string): string {
  const row = JSON.parse(record) as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(Object.entries(row).map(([key, value]) => [camel(key), value])));
}

/**
 * One chunk: the lines of a batch as a gzip member (an empty batch still makes a valid, empty one),
 * compressed in libuv's thread pool, not in the thread that answers requests.
 */
export function chunkOf(lines: readonly string[]): Promise<Buffer> {
  return compress(lines.map((line) => `${line}\n`).join(''));
}

/** The file name of a kind in the archive. */
export const fileOf = (kind: string) => `${kind}.ndjson.gz`;

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value, offset, length, 'ascii');
}

const octal = (value: number, digits: number) => value.toString(8).padStart(digits, '0');

/** The 512-byte ustar header of a regular file. */
export function tarHeader(name: string, size: number, modified: Date): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar name too long: ${name}`);
  const header = Buffer.alloc(block);
  field(header, 0, 100, name);
  field(header, 100, 8, '0000644\0');
  field(header, 108, 8, '0000000\0');
  field(header, 116, 8, '0000000\0');
  field(header, 124, 12, `${octal(size, 11)}\0`);
  field(header, 136, 12, `${octal(Math.floor(modified.getTime() / 1000), 11)}\0`);
  field(header, 148, 8, '        ');
  field(header, 156, 1, '0');
  field(header, 257, 6, 'ustar\0');
  field(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, `${octal(sum, 6)}\0 `);
  return header;
}

/** The zeros that fill a file of `size` bytes up to the next block. */
export const tarPadding = (size: number): Buffer => Buffer.alloc((block - (size % block)) % block);

/** The two empty blocks that end a tar file. */
export const tarEnd = (): Buffer => Buffer.alloc(2 * block);

/** The size of a file in the archive with its header and padding. */
export const tarEntrySize = (size: number): number => block + size + tarPadding(size).length;

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

/** The whole archive's size: the manifest, every file, and the end. */
export const archiveSize = (manifest: Buffer, files: readonly ArchiveFile[]): number =>
  tarEntrySize(manifest.length) + files.reduce((total, file) => total + tarEntrySize(file.bytes), 0) + 2 * block;
