// The code sandbox (src/checks/sandbox.ts, code.ts): escapes, loops, recursion, allocations and
// huge outputs end as clean error results, and the sandbox keeps serving afterwards.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runCode, SAMPLE_INPUT, type CodeOutcome } from '../src/checks/code.ts';
import { CodeSandbox } from '../src/checks/sandbox.ts';

const sandbox = new CodeSandbox({ timeoutMs: 150, memoryBytes: 16 * 1024 * 1024, workers: 1 });
after(() => sandbox.close());

let n = 0;
const score = (code: string, input = SAMPLE_INPUT): Promise<CodeOutcome> => runCode(sandbox, `test:${n++}`, code, input);
const healthy = async () => assert.deepEqual(await score('return input.response.includes("Paris") ? 1 : 0'), { ok: true, score: 1, justification: 'score(input) returned 1.' });
const failsWith = async (code: string, pattern: RegExp) => {
  const out = await score(code);
  assert.equal(out.ok, false, `expected an error for: ${code}`);
  assert.match((out as { error: string }).error, pattern);
  await healthy();
};

describe('code evaluators in the sandbox', () => {
  test('a body or a score function; a number, a boolean or {score, justification}', async () => {
    await healthy();
    assert.deepEqual(await score('function score(input) { return { score: 0.25, justification: "short: " + input.response.length } }'), {
      ok: true,
      score: 0.25,
      justification: 'short: 31',
    });
    assert.equal(((await score('return input.contexts.length === 1')) as { score: number }).score, 1);
    assert.equal(((await score('return input.expected_output === "Paris" ? 1 : 0')) as { score: number }).score, 1);
  });

  test('out of range, no answer and a throw are errors with the line', async () => {
    await failsWith('return 1.5', /outside 0\.\.1/);
    await failsWith('return "high"', /return a number in 0\.\.1/);
    await failsWith('const x = 1;', /returned nothing/);
    await failsWith('const a = 1;\nthrow new Error("boom")', /threw \(line 2\): Error: boom/);
    await failsWith('return NaN', /return a number/);
  });

  test('no host: process, require, timers, fetch, Function tricks reach nothing', async () => {
    const probe = await score(
      'const seen = [typeof process, typeof require, typeof setTimeout, typeof fetch, typeof globalThis.process, typeof (function(){ return this })(), ' +
        'typeof ({}).constructor.constructor("return typeof process")(), typeof Buffer, typeof WebAssembly, typeof import.meta];' +
        'return { score: 0, justification: seen.join(",") }',
    );
    // import.meta is a syntax error in a script: the whole probe must then fail to compile, so it is probed apart.
    assert.equal(probe.ok, false);
    const out = await score(
      'const seen = [typeof process, typeof require, typeof setTimeout, typeof fetch, typeof globalThis.process, typeof Buffer, typeof WebAssembly, ' +
        '({}).constructor.constructor("return typeof process")(), typeof console, typeof Function("return this")().require, ' +
        'typeof Object.getPrototypeOf(async function () {}).constructor("return process")];' +
        'return { score: 0, justification: seen.join(",") }',
    );
    assert.ok(out.ok);
    assert.equal(out.justification, 'undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,function');
    await failsWith('return require("fs").readFileSync("/etc/passwd", "utf8").length ? 1 : 0', /require.? is not defined/);
    await failsWith('return import("fs").then(() => 1)', /return a number|not/);
  });

  test('prototype pollution stays inside the sandbox', async () => {
    const viaAnswer = await score('return JSON.parse(\'{"__proto__": {"polluted": "yes"}, "score": 1}\')');
    assert.ok(viaAnswer.ok, 'an answer carrying __proto__ is read as data');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const out = await score('Object.prototype.polluted = "yes"; Array.prototype.map = null; JSON.parse = () => 1; return 1');
    assert.ok(out.ok);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(typeof [].map, 'function');
    assert.deepEqual(JSON.parse('{"a":2}'), { a: 2 });
    await healthy();
  });

  test('an infinite loop is stopped by the time limit and the event loop keeps turning', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const out = await score('while (true) {}');
    clearInterval(timer);
    assert.equal(out.ok, false);
    assert.match((out as { error: string }).error, /time limit/);
    assert.ok(ticks > 0, 'the host event loop ran while the sandbox looped');
    await healthy();
  });

  test('deep recursion, huge allocations and huge outputs are errors', async () => {
    await failsWith('function f(n) { return f(n + 1) + 1 } return f(0)', /recursion|stack/);
    await failsWith('const a = []; while (true) a.push("x".repeat(1000) + a.length)', /memory|time limit/);
    await failsWith('const a = []; while (true) a.push(new Array(1e4).fill(a.length))', /memory|time limit/);
    await failsWith('return new ArrayBuffer(1e9).byteLength ? 1 : 0', /memory/);
    await failsWith('return { score: 1, justification: "x".repeat(5e5) }', /characters, more than/);
    await failsWith('const s = "x".repeat(2 ** 28); return s.length ? 1 : 0', /memory/);
  });

  test('state left in globals stays with its key (runtimes are per organization and version)', async () => {
    const code = 'globalThis.seen = (globalThis.seen || []).concat(input.response); return { score: 1, justification: globalThis.seen.join("|") }';
    const a1 = await runCode(sandbox, 'org_a:evl_1@1', code, { ...SAMPLE_INPUT, response: 'secret of A' });
    const b1 = await runCode(sandbox, 'org_b:evl_1@1', code, { ...SAMPLE_INPUT, response: 'B' });
    assert.ok(a1.ok && b1.ok);
    assert.equal(b1.justification, 'B', 'another organization never sees what a run of A left behind');
  });

  test('a compile error is reported with its line by tryOnce', async () => {
    const out = await sandbox.tryOnce('const a = 1;\nconst b = ;\nreturn 1', SAMPLE_INPUT);
    assert.equal(out.ok, false);
    assert.equal(!out.ok && out.error.kind, 'compile');
    assert.equal(!out.ok && out.error.line, 2);
  });

  test('many concurrent runs all answer', async () => {
    const outs = await Promise.all(Array.from({ length: 200 }, (_, i) => runCode(sandbox, `conc:${i % 5}`, 'return input.response.length > 3 ? 1 : 0', SAMPLE_INPUT)));
    assert.ok(outs.every((o) => o.ok && o.score === 1));
  });
});
