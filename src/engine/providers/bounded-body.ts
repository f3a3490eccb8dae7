// Bounded reads of an upstream answer (a judge model, a proxied provider, a provider's batch
// results): never more than a cap of bytes on the wire, and never more than a cap after
// decompression, counted as the bytes arrive, so a gzip bomb or an endless body ends early as an
// UpstreamTooLargeError instead of filling the server's memory. Decompression runs in zlib's
// streaming form (off the main thread's hot path, a chunk at a time, stopped at the cap).
//
// Other rooms reuse this: `readBoundedBody(response.body ?? readable, { encoding })` for any upstream
// body they read, and `decompressBounded(buffer, encoding)` for one already collected under a wire cap.
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** The default caps: judge-model answers are small JSON; 16 MiB is far above any real one. */
export const DEFAULT_UPSTREAM_MAX_BYTES = 16 * 1024 * 1024;

export class UpstreamTooLargeError extends Error {
  readonly code = 'UPSTREAM_TOO_LARGE';
  constructor(
    readonly limitBytes: number,
    readonly stage: 'wire' | 'decoded',
  ) {
    super(`the upstream answer is larger than ${limitBytes} bytes${stage === 'decoded' ? ' once decompressed' : ''}; it was not read`);
    this.name = 'UpstreamTooLargeError';
  }
}

export interface BoundedReadOptions {
  /** The content-encoding the body was sent with (gzip, deflate, br, identity or none). */
  encoding?: string | null;
  /** At most this many bytes as sent (default DEFAULT_UPSTREAM_MAX_BYTES). */
  maxWireBytes?: number;
  /** At most this many bytes after decompression (default DEFAULT_UPSTREAM_MAX_BYTES). */
  maxBytes?: number;
}

/** A streaming decompressor for a content-encoding, or null for none/identity; throws for an unknown one. */
export function decompressorFor(encoding: string | null | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return null;
  if (e === 'gzip' || e === 'x-gzip') return zlib.createGunzip();
  if (e === 'deflate') return zlib.createInflate();
  if (e === 'br') return zlib.createBrotliDecompress();
  throw new Error(`the upstream answer has an unsupported content-encoding ${JSON.stringify(encoding)}`);
}

type Source = AsyncIterable<Uint8Array> | Iterable<Uint8Array> | ReadableStream<Uint8Array> | NodeJS.ReadableStream;

function iterate(source: Source): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  if (typeof (source as ReadableStream).getReader === 'function' && !(Symbol.asyncIterator in source)) {
    return Readable.fromWeb(source as unknown as import('node:stream/web').ReadableStream<Uint8Array>);
  }
  return source as AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * Reads a body to one Buffer, bounded before and after decompression. Stops reading (and destroys
 * the source when it can be destroyed) as soon as a cap is passed, with an UpstreamTooLargeError.
 */
export async function readBoundedBody(source: Source | null | undefined, opts: BoundedReadOptions = {}): Promise<Buffer> {
  if (!source) return Buffer.alloc(0);
  const maxWire = opts.maxWireBytes ?? DEFAULT_UPSTREAM_MAX_BYTES;
  const maxBytes = opts.maxBytes ?? DEFAULT_UPSTREAM_MAX_BYTES;
  const decoder = decompressorFor(opts.encoding);
  const out: Buffer[] = [];
  let decoded = 0;
  const take = (chunk: Buffer) => {
    decoded += chunk.length;
    if (decoded > maxBytes) throw new UpstreamTooLargeError(maxBytes, decoder ? 'decoded' : 'wire');
    out.push(chunk);
  };
  let wire = 0;
  const iterable = iterate(source);
  try {
    if (!decoder) {
      for await (const chunk of iterable) {
        wire += chunk.length;
        if (wire > maxWire) throw new UpstreamTooLargeError(maxWire, 'wire');
        take(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
      return Buffer.concat(out);
    }
    // The decoder's output is read as it comes, so at most one chunk (16 KiB) past the cap is ever held.
    let failure: Error | undefined;
    decoder.on('data', (chunk: Buffer) => {
      if (failure) return;
      try {
        take(chunk);
      } catch (err) {
        failure = err as Error;
        decoder.destroy();
      }
    });
    const done = new Promise<void>((resolve, reject) => {
      decoder.once('end', resolve);
      decoder.once('error', reject);
      decoder.once('close', () => (failure ? reject(failure) : resolve()));
    });
    done.catch(() => {});
    for await (const chunk of iterable) {
      if (failure) break;
      wire += chunk.length;
      if (wire > maxWire) throw new UpstreamTooLargeError(maxWire, 'wire');
      if (!decoder.write(chunk))
        await new Promise<void>((resolve) => (failure || decoder.destroyed ? resolve() : decoder.once('drain', resolve) && decoder.once('close', resolve)));
    }
    if (failure) throw failure;
    decoder.end();
    await done;
    if (failure) throw failure;
    return Buffer.concat(out);
  } catch (err) {
    decoder?.destroy();
    const destroy = (source as { destroy?: (e?: Error) => void }).destroy;
    if (typeof destroy === 'function') destroy.call(source);
    else if (typeof (source as ReadableStream).cancel === 'function') (source as ReadableStream).cancel().catch(() => {});
    throw err;
  }
}

/** Decompresses an already collected body (collected under a wire cap), stopping at maxBytes. */
export function decompressBounded(data: Buffer, encoding: string | null | undefined, maxBytes = DEFAULT_UPSTREAM_MAX_BYTES): Promise<Buffer> {
  return readBoundedBody([data], { encoding, maxWireBytes: Number.MAX_SAFE_INTEGER, maxBytes });
}
