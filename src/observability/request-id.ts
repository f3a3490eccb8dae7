// The id of a request that came without one: a correlation id for the logs, echoed in X-Request-Id and
// in problem bodies. It is no secret and grants nothing: a caller may send any id of its own, which
// is echoed and logged as it is. What it must be is unique and shaped as before (a version-4 UUID's
// text). crypto.randomUUID per request was about a tenth of observability's share of a judged call
// (issue 33), so the random part is drawn once per block of 65,536 ids and a counter tells the
// block's ids apart: unique within a block by the counter, across blocks and processes by 106
// random bits. A caller sees at most the low 16 bits of how many requests came before it.
import { randomUUID } from 'node:crypto';

const BLOCK = 0x10000;
/** Two hex digits of every byte value, so a counter is written without toString and padding. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export class RequestIds {
  /** A fresh UUID's text without its last 4 hex digits (version and variant bits kept). */
  private prefix = '';
  private next = BLOCK;

  newId(): string {
    if (this.next === BLOCK) {
      this.prefix = randomUUID().slice(0, 32);
      this.next = 0;
    }
    const n = this.next++;
    return this.prefix + HEX[n >> 8]! + HEX[n & 0xff]!;
  }
}
