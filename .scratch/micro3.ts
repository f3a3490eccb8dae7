import crypto, { createHash, timingSafeEqual } from 'node:crypto';
const key = 'trb_0123456789abcdef_' + 'a'.repeat(43);
const hash = createHash('sha256').update(key).digest('hex');
async function time(name: string, n: number, f: () => unknown) {
  let best = Infinity;
  for (let r = 0; r < 6; r++) { const t = performance.now(); for (let i = 0; i < n; i++) f(); best = Math.min(best, (performance.now() - t) / n * 1000); }
  console.log(name.padEnd(30), best.toFixed(2), 'µs');
}
await time('createHash hex', 50000, () => createHash('sha256').update(key).digest('hex'));
await time('createHash buf', 50000, () => createHash('sha256').update(key).digest());
await time('crypto.hash buf', 50000, () => (crypto as any).hash('sha256', key, 'buffer'));
await time('crypto.hash hex', 50000, () => (crypto as any).hash('sha256', key, 'hex'));
await time('Buffer.from hex', 50000, () => Buffer.from(hash, 'hex'));
await time('timingSafeEqual', 50000, () => timingSafeEqual(Buffer.from(hash, 'hex'), Buffer.from(hash, 'hex')));
console.log((crypto as any).hash('sha256', key, 'hex') === hash);
