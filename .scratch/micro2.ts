import { createHash, timingSafeEqual } from 'node:crypto';
import { keyFromAuthorization } from '../src/auth.ts';
const key = 'trb_0123456789abcdef_' + 'a'.repeat(43);
const header = 'Api-Key ' + key;
const KEY_PATTERN = /^(trb_[0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const hash = createHash('sha256').update(key).digest('hex');
async function time(name: string, n: number, f: () => unknown) {
  let best = Infinity;
  for (let r = 0; r < 6; r++) { const t = performance.now(); for (let i = 0; i < n; i++) await f(); best = Math.min(best, (performance.now() - t) / n * 1000); }
  console.log(name.padEnd(30), best.toFixed(2), 'µs');
}
await time('await nothing', 50000, () => undefined);
await time('keyFromAuthorization', 50000, () => keyFromAuthorization(header));
await time('KEY_PATTERN', 50000, () => KEY_PATTERN.exec(key));
await time('hash+compare', 50000, () => timingSafeEqual(createHash('sha256').update(key).digest(), Buffer.from(hash, 'hex')));
await time('dates', 50000, () => { const now = new Date(); return new Date('2026-11-26T16:00:00.000Z') <= now && now.getTime() - new Date('2026-11-26T16:00:00.000Z').getTime(); });
await time('async fn 2 awaits', 50000, async () => { await Promise.resolve(1); await Promise.resolve(2); });
