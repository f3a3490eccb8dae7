// Server-sent events as they arrive: bytes in, whole events out (an event ends at a blank line), so
// that each event can be passed on the moment it is complete. An event longer than the bound is an
// error rather than memory without end.
import { StringDecoder } from 'node:string_decoder';
import { TribunalError } from '../errors.ts';
import { MAX_UPSTREAM_BYTES } from './upstream.ts';

export class SseSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  constructor(private readonly maxEvent = MAX_UPSTREAM_BYTES) {}

  /** The events completed by this chunk, each without its closing blank line. */
  push(chunk: Buffer): string[] {
    this.buffer += this.decoder.write(chunk);
    const events: string[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n\n', start);
      const crlf = this.buffer.indexOf('\r\n\r\n', start);
      const end = lf < 0 ? crlf : crlf < 0 ? lf : Math.min(lf, crlf);
      if (end < 0) break;
      events.push(this.buffer.slice(start, end));
      start = end + (end === crlf ? 4 : 2);
    }
    this.buffer = start ? this.buffer.slice(start) : this.buffer;
    if (this.buffer.length > this.maxEvent)
      throw new TribunalError('model_unavailable', 502, `An upstream stream event is over ${this.maxEvent} bytes; the proxy stopped reading.`);
    return events;
  }

  /** What is left when the stream ends (an event without its blank line), if anything. */
  rest(): string | null {
    const tail = (this.buffer + this.decoder.end()).trim();
    this.buffer = '';
    return tail || null;
  }
}

/** The data of an event: its `data:` lines joined; null for an event without data (a comment). */
export function eventData(event: string): string | null {
  // The common event, one `data: ` line, without splitting it into lines.
  if (event.startsWith('data: ') && !event.includes('\n')) return event.slice(6);
  let data: string | null = null;
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

/**
 * Reads an upstream stream to its end, handing each complete event to `take` and calling `flush`
 * after each chunk's events (so what one chunk brought leaves in one write) and after the last,
 * unterminated event. A read error is thrown to the caller after nothing more is taken.
 */
export async function relayEvents(body: AsyncIterable<Buffer>, take: (event: string) => void, flush: () => void): Promise<void> {
  const splitter = new SseSplitter();
  for await (const bytes of body) {
    for (const event of splitter.push(bytes)) take(event);
    flush();
  }
  const tail = splitter.rest();
  if (tail) take(tail);
  flush();
}

export const sseEvent = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
