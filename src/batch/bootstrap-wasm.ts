// The draws of the paired bootstrap (bootstrap.ts) as a small WebAssembly SIMD function, written
// here op by op (no toolchain): the same mulberry32 indexes and the same sums, bit for bit, in
// about a quarter of the CPU of the JavaScript loop (issue 33: the bootstrap was more than half of
// an experiment's first compare). Why it is the same:
// - mulberry32 is a counter: draw i of a resample that starts at `state` is state + i * C (mod 2^32)
//   scrambled, so four consecutive draws are scrambled side by side in the four lanes of an i32x4
//   with the same 32-bit operations (imul = i32x4.mul, >>> = shr_u, the wrapping add).
// - index = u32 * (n / 2^32), truncated, is exactly (u32 * n) >> 32 while u32 * n < 2^53 (both are
//   the real product scaled by a power of two): the 64-bit products of i64x2.extmul. Used only
//   for n < 2^21 (callers check `fits`).
// - a row is four floats: lanes 0-1 and 2-3 are added as two f64x2, each lane in draw order, so
//   every series' sum is the same sequence of IEEE additions as the scalar loop's.
// The count of the first presence pattern (bytes) is summed as an integer, as in the loop.

const C = 0x6d2b79f5;
/** Largest number of pairs drawn here: past it u32 * n may round in a double (see above). */
const MAX_N = 2 ** 21 - 1;

// Opcodes used (WebAssembly core 2.0, SIMD under the 0xfd prefix).
const I32 = 0x7f;
const V128 = 0x7b;
const [BLOCK, LOOP, BR, BR_IF, END, VOID] = [0x02, 0x03, 0x0c, 0x0d, 0x0b, 0x40];
const [GET, SET] = [0x20, 0x21];
const [I32_CONST, I64_CONST] = [0x41, 0x42];
const [I32_LOAD8_U, F64_STORE] = [0x2d, 0x39];
const [I32_GT_U, I32_GE_U, I32_ADD, I32_MUL, I32_OR, I32_XOR, I32_SHL, I32_SHR_U] = [0x4b, 0x4f, 0x6a, 0x6c, 0x72, 0x73, 0x74, 0x76];
const [I64_MUL, I64_SHR_U, I32_WRAP_I64, I64_EXTEND_I32_U, F64_CONVERT_I32_U] = [0x7e, 0x88, 0xa7, 0xad, 0xb8];
const simd = (op: number) => [0xfd, ...uleb(op)];
const V_LOAD = (offset: number) => [...simd(0x00), 3, ...uleb(offset)];
const V_STORE = (offset: number) => [...simd(0x0b), 3, ...uleb(offset)];
const V_CONST = (lanes: number[]) => [...simd(0x0c), ...new Uint8Array(Int32Array.from(lanes).buffer)];
const I32X4_SPLAT = simd(0x11);
const I32X4_LANE = (lane: number) => [...simd(0x1b), lane];
const [V_OR, V_XOR] = [simd(0x50), simd(0x51)];
const [I32X4_SHR_U, I32X4_ADD, I32X4_MUL] = [simd(0xad), simd(0xae), simd(0xb5)];
const [I64X2_SHR_U, I64X2_MUL_LOW_U, I64X2_MUL_HIGH_U, F64X2_ADD] = [simd(0xcd), simd(0xde), simd(0xdf), simd(0xf0)];

function uleb(v: number): number[] {
  const out: number[] = [];
  do {
    const b = v & 0x7f;
    v >>>= 7;
    out.push(v ? b | 0x80 : b);
  } while (v);
  return out;
}

function sleb(v: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if ((v === 0 && !(b & 0x40)) || (v === -1 && b & 0x40)) return [...out, b];
    out.push(b | 0x80);
  }
}

// Locals: the parameters, then i32 and v128 working locals.
const [n, resamples, state, rows, counts, out] = [0, 1, 2, 3, 4, 5];
const [r, i, m, a, s, x, p] = [6, 7, 8, 9, 10, 11, 12];
const [st, t, acc01, acc23, nv] = [13, 14, 15, 16, 17];
const lo = 18;
const hi = 19;

const get = (l: number) => [GET, ...uleb(l)];
const set = (l: number) => [SET, ...uleb(l)];
const i32 = (v: number) => [I32_CONST, ...sleb(v | 0)];

/** Adds row `a` (local) to the sums and its presence byte to the count. */
// biome-ignore format: one wasm instruction sequence per line reads best
const addRow = [
  ...get(a), ...i32(5), I32_SHL, ...get(rows), I32_ADD, ...set(p),
  ...get(acc01), ...get(p), ...V_LOAD(0), ...F64X2_ADD, ...set(acc01),
  ...get(acc23), ...get(p), ...V_LOAD(16), ...F64X2_ADD, ...set(acc23),
  ...get(m), ...get(counts), ...get(a), I32_ADD, I32_LOAD8_U, 0, 0, I32_ADD, ...set(m),
];

// mulberry32's scramble of the state in local `l`, left in `l`: t = imul(t ^ t >>> 15, t | 1);
// t ^= t + imul(t ^ t >>> 7, t | 61); t ^= t >>> 14. Four lanes at once, or one.
// biome-ignore format: one wasm instruction sequence per line reads best
const scramble4 = (l: number) => [
  ...get(l), ...get(l), ...i32(15), ...I32X4_SHR_U, ...V_XOR, ...get(l), ...V_CONST([1, 1, 1, 1]), ...V_OR, ...I32X4_MUL, ...set(l),
  ...get(l), ...get(l), ...get(l), ...get(l), ...i32(7), ...I32X4_SHR_U, ...V_XOR, ...get(l), ...V_CONST([61, 61, 61, 61]), ...V_OR, ...I32X4_MUL, ...I32X4_ADD, ...V_XOR, ...set(l),
  ...get(l), ...get(l), ...i32(14), ...I32X4_SHR_U, ...V_XOR, ...set(l),
];
// biome-ignore format: one wasm instruction sequence per line reads best
const scramble1 = (l: number) => [
  ...get(l), ...get(l), ...i32(15), I32_SHR_U, I32_XOR, ...get(l), ...i32(1), I32_OR, I32_MUL, ...set(l),
  ...get(l), ...get(l), ...get(l), ...get(l), ...i32(7), I32_SHR_U, I32_XOR, ...get(l), ...i32(61), I32_OR, I32_MUL, I32_ADD, I32_XOR, ...set(l),
  ...get(l), ...get(l), ...i32(14), I32_SHR_U, I32_XOR, ...set(l),
];

// biome-ignore format: one wasm instruction sequence per line reads best
const body = [
  ...get(n), ...I32X4_SPLAT, ...set(nv),
  BLOCK, VOID, LOOP, VOID, // each resample
  ...get(r), ...get(resamples), I32_GE_U, BR_IF, 1,
  ...V_CONST([0, 0, 0, 0]), ...set(acc01), ...V_CONST([0, 0, 0, 0]), ...set(acc23), ...i32(0), ...set(m), ...i32(0), ...set(i),
  ...get(state), ...I32X4_SPLAT, ...V_CONST([C, 2 * C, 3 * C, 4 * C]), ...I32X4_ADD, ...set(st),
  BLOCK, VOID, LOOP, VOID, // four draws at a time
  ...get(i), ...i32(4), I32_ADD, ...get(n), I32_GT_U, BR_IF, 1,
  ...get(st), ...set(t), ...scramble4(t),
  ...get(t), ...get(nv), ...I64X2_MUL_LOW_U, ...i32(32), ...I64X2_SHR_U, ...set(lo),
  ...get(t), ...get(nv), ...I64X2_MUL_HIGH_U, ...i32(32), ...I64X2_SHR_U, ...set(hi),
  ...([[lo, 0], [lo, 2], [hi, 0], [hi, 2]] as const).flatMap(([v, lane]) => [...get(v), ...I32X4_LANE(lane), ...set(a), ...addRow]),
  ...get(st), ...V_CONST([4 * C, 4 * C, 4 * C, 4 * C]), ...I32X4_ADD, ...set(st),
  ...get(i), ...i32(4), I32_ADD, ...set(i),
  BR, 0, END, END,
  ...get(state), ...get(i), ...i32(C), I32_MUL, I32_ADD, ...set(s),
  BLOCK, VOID, LOOP, VOID, // the last draws one at a time
  ...get(i), ...get(n), I32_GE_U, BR_IF, 1,
  ...get(s), ...i32(C), I32_ADD, ...set(s), ...get(s), ...set(x), ...scramble1(x),
  ...get(x), I64_EXTEND_I32_U, ...get(n), I64_EXTEND_I32_U, I64_MUL, I64_CONST, 32, I64_SHR_U, I32_WRAP_I64, ...set(a), ...addRow,
  ...get(i), ...i32(1), I32_ADD, ...set(i),
  BR, 0, END, END,
  ...get(state), ...get(n), ...i32(C), I32_MUL, I32_ADD, ...set(state),
  ...get(out), ...get(r), ...i32(40), I32_MUL, I32_ADD, ...set(p),
  ...get(p), ...get(acc01), ...V_STORE(0), ...get(p), ...get(acc23), ...V_STORE(16), ...get(p), ...get(m), F64_CONVERT_I32_U, F64_STORE, 3, 32,
  ...get(r), ...i32(1), I32_ADD, ...set(r),
  BR, 0, END, END,
  END,
];

const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
const name = (text: string) => [...uleb(text.length), ...new TextEncoder().encode(text)];
const code = [2, 7, I32, 7, V128, ...body]; // locals: 7 i32, 7 v128
const bytes = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 6, I32, I32, I32, I32, I32, I32, 0]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0, 1]),
  ...section(7, [2, ...name('draw'), 0, 0, ...name('memory'), 2, 0]),
  ...section(10, [1, ...uleb(code.length), ...code]),
]);

let instance: { draw: (...args: number[]) => void; memory: WebAssembly.Memory } | null | undefined;

function load() {
  if (instance !== undefined) return instance;
  try {
    instance = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as unknown as typeof instance;
  } catch {
    instance = null; // no WebAssembly SIMD here: the JavaScript loop draws (same results)
  }
  return instance;
}

/** Whether these draws can be made here (WebAssembly SIMD present, n small enough for exact indexes). */
export const fits = (pairs: number): boolean => pairs > 0 && pairs <= MAX_N && load() !== null;

/**
 * For each of `resamples` resamples (the first starting at `seed`'s state), the sums of the four
 * columns of `packed` (n rows of four floats) over n drawn rows, and the sum of `present` (bytes)
 * over the same rows: five floats per resample. Null when the memory for it cannot be had.
 */
export function drawSums(packed: Float64Array, present: Uint8Array, n: number, count: number, seed: number): Float64Array | null {
  const wasm = load()!;
  const outAt = Math.ceil((n * 33) / 8) * 8;
  const need = outAt + count * 40;
  const memory = wasm.memory;
  if (memory.buffer.byteLength < need) {
    try {
      memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
    } catch {
      return null; // no memory for it now: the caller draws in JavaScript
    }
  }
  new Float64Array(memory.buffer, 0, n * 4).set(packed);
  new Uint8Array(memory.buffer, n * 32, n).set(present);
  wasm.draw(n, count, seed | 0, 0, n * 32, outAt);
  const sums = new Float64Array(memory.buffer.slice(outAt, outAt + count * 40));
  // A big run's memory is not kept for the life of the process (wasm memory cannot shrink).
  if (memory.buffer.byteLength > 16 * 1024 * 1024) instance = undefined;
  return sums;
}
