/**
 * A CSV export as an answer (issue 45): the whole set, streamed as it is read. Records come in keyset
 * batches from the database (`batches`), pass through `csv-stringify` and go out as the connection
 * takes them: `Readable.from` asks for the next batch only when the stringifier and the socket have
 * room (backpressure), so memory holds about one batch whatever the number of rows.
 *
 * The format is the one spreadsheets open without a dialog: UTF-8 with a byte-order mark (Excel reads
 * UTF-8 only with it), comma separators, CRLF line ends (RFC 4180), a header row, and fields quoted
 * only where they hold a comma, a quote or a line break. Every cell a spreadsheet would run as a
 * formula is neutralised (src/rules/csvCells.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { Logger } from 'pino';
import { loggableError } from '../logger.js';
import { neutraliseCell } from '../rules/csvCells.js';
import { StreamBody } from './streamBody.js';

/** The `Content-Disposition` of an export saved as `filename`. */
export const attachment = (filename: string) => ({ 'Content-Disposition': `attachment; filename="${filename}"` });

/** The media type of every CSV the API answers. */
export const CSV_MEDIA_TYPE = 'text/csv; charset=utf-8; header=present';

/** One row of an export: each cell's text, `null` for an empty cell. */
export type CsvRow = readonly (string | null)[];

/** The rows of an export, one batch at a time, each batch read from the database when the last is sent. */
export type CsvBatches = AsyncIterable<readonly CsvRow[]>;

async function* cellsOf(header: readonly string[], batches: CsvBatches): AsyncGenerator<string[]> {
  yield header.map(neutraliseCell);
  for await (const batch of batches) {
    for (const row of batch) yield row.map((cell) => (cell === null ? '' : neutraliseCell(cell)));
  }
}

/**
 * The body of an export (its file name is the handler's `Content-Disposition`): the head is sent with
 * the first bytes, so that a refusal found before (the access check, made on the first batch) still
 * answers as an error. A failure while streaming can no longer change the status: the connection is
 * then cut, and the client sees a truncated download rather than a complete-looking file.
 */
export function csvBody(header: readonly string[], batches: CsvBatches, logger: Logger): StreamBody {
  return new StreamBody(async (req, res) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', CSV_MEDIA_TYPE);
    res.setHeader('Cache-Control', 'no-store');
    if (req.method === 'HEAD') return void res.end();
    const stringifier = stringify({ bom: true, delimiter: ',', record_delimiter: 'windows' });
    try {
      await pipeline(Readable.from(cellsOf(header, batches)), stringifier, res);
    } catch (error) {
      // After the head nothing can be answered any more. A client that went away is no failure; a read that failed is logged.
      if ((error as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        logger.error({ err: loggableError(error), requestId: req.requestId }, 'a CSV export failed while streaming; its connection was cut');
      }
      res.destroy();
    }
  });
}

/**
 * The batches of a keyset walk from its first batch, read already (with the caller's standing, for the
 * access check before anything is sent): `read(after)` gives the rows after the key `after`, at most
 * `size`, in key order; `keyOf` is a row's key, `toCsv` a batch's rows of cells. A short batch is the last.
 */
export async function* keysetBatches<Row, Key>(
  first: readonly Row[],
  size: number,
  read: (after: Key) => Promise<readonly Row[]>,
  keyOf: (row: Row) => Key,
  toCsv: (batch: readonly Row[]) => readonly CsvRow[],
): AsyncGenerator<readonly CsvRow[]> {
  let batch = first;
  while (batch.length > 0) {
    yield toCsv(batch);
    if (batch.length < size) return;
    batch = await read(keyOf(batch[batch.length - 1]!));
  }
}
