/**
 * The body of a CSV import (issue 45), read once the request has been authenticated and routed: at
 * most `CSV_MAX_BYTES`, in UTF-8, decoded to text for the handler. A file in another encoding is
 * refused with 415 rather than read as garbage: UTF-16 (what Excel's "Unicode text" writes, told by
 * its byte-order mark or the NUL bytes of its first character) and bytes that are no UTF-8 (a legacy
 * code page such as Windows-1252). A UTF-8 byte-order mark is taken away.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { PayloadTooLarge, UnsupportedMediaType } from '../errors.js';

/** The largest CSV an import takes: 2 MiB, some 10,000 rows of a to-do list with room to spare. */
export const CSV_MAX_BYTES = 2 * 1024 * 1024;

const readRaw = express.raw({ type: () => true, limit: CSV_MAX_BYTES });
const tooLarge = () => new PayloadTooLarge('The CSV is larger than 2 MB (2,097,152 bytes); split it into several imports.');
const notUtf8 = (what: string) =>
  new UnsupportedMediaType(`The CSV must be UTF-8 (with or without a byte-order mark); this one is ${what}. Save it as "CSV UTF-8".`);

/** The text of a CSV file's bytes, or the reason it is not UTF-8. */
export function csvText(bytes: Buffer): string | UnsupportedMediaType {
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes.length >= 2 && (bytes[0] === 0 || bytes[1] === 0));
  if (utf16) return notUtf8('UTF-16');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return notUtf8('not UTF-8 (perhaps a legacy code page such as Windows-1252)');
  }
}

/** Reads and decodes the body into `req.body` as text; 413, or 415 for another media type or encoding. */
export function readCsvBody(req: Request, res: Response, next: NextFunction) {
  if (Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined) {
    if (!req.is('text/csv')) return next(new UnsupportedMediaType('The request body must be sent as text/csv.'));
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) return next(notUtf8(charset));
  }
  readRaw(req, res, (error?: unknown) => {
    if (error) {
      const { type } = error as { type?: string };
      if (type === 'entity.too.large') return next(tooLarge());
      if (type === 'encoding.unsupported') return next(new UnsupportedMediaType('The request body must be text/csv without an unknown content encoding.'));
      return next(error);
    }
    const text = csvText(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    if (text instanceof UnsupportedMediaType) return next(text);
    req.body = text;
    next();
  });
}
