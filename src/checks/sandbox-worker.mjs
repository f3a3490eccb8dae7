// The code sandbox's worker thread (sandbox.ts): runs evaluators' score(input) in QuickJS compiled
// to WebAssembly. Each evaluator version gets its own QuickJS runtime (its own heap, with the
// memory limit, a stack limit and an interrupt deadline), kept for later runs; a runtime that hit
// a limit is thrown away. The sandbox has no I/O, no timers, no host objects: only the ECMAScript
// built-ins QuickJS provides and the input, passed in as JSON text and parsed inside.
// Plain JavaScript on purpose: a worker must start without the TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { getQuickJS } from 'quickjs-emscripten';

const PREFIX = '"use strict";\nglobalThis.__tribunal_run = (function () {\n  const parse = JSON.parse, stringify = JSON.stringify;\n  const user = function (input) {\n';
const SUFFIX =
  "\n;return typeof score === 'function' ? score(input) : undefined;\n  };\n  return function (text) { const value = user(parse(text)); return value === undefined ? '' : stringify(value); };\n})();";
/** The user's first line is the wrapper's fifth. */
const LINE_OFFSET = 4;
const MAX_RUNTIMES = 64;

const quickjs = getQuickJS();
/** key -> { runtime, context, fn, deadline } */
const entries = new Map();

function dispose(key) {
  const e = entries.get(key);
  if (!e) return;
  entries.delete(key);
  try {
    e.fn.dispose();
    e.context.dispose();
    e.runtime.dispose();
  } catch {
    // A runtime broken by an overflow may not dispose cleanly; its memory goes with the worker's next restart.
  }
}

function classify(dumped) {
  const message = typeof dumped === 'object' && dumped !== null ? `${dumped.name ?? 'Error'}: ${dumped.message ?? ''}` : String(dumped);
  if (/InternalError: interrupted/.test(message)) return { kind: 'timeout', message: 'it ran past the time limit' };
  if (/out of memory/.test(message)) return { kind: 'memory', message: 'it ran out of memory (the memory limit)' };
  if (/stack overflow/.test(message)) return { kind: 'stack', message: 'too much recursion (stack overflow)' };
  let line = typeof dumped?.lineNumber === 'number' ? dumped.lineNumber - LINE_OFFSET : undefined;
  if (line === undefined && typeof dumped?.stack === 'string') {
    const m = /score\.js:(\d+)/.exec(dumped.stack);
    if (m) line = Number(m[1]) - LINE_OFFSET;
  }
  return { kind: 'throw', message: message.slice(0, 500), line: line !== undefined && line >= 1 ? line : undefined };
}

async function create(code, limits) {
  const QuickJS = await quickjs;
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  const entry = { runtime, context: null, fn: null, deadline: 0 };
  runtime.setInterruptHandler(() => Date.now() > entry.deadline);
  const context = runtime.newContext();
  entry.context = context;
  entry.deadline = Date.now() + limits.timeoutMs;
  const result = context.evalCode(PREFIX + code + SUFFIX, 'score.js');
  if (result.error) {
    const dumped = context.dump(result.error);
    result.error.dispose();
    context.dispose();
    runtime.dispose();
    const c = classify(dumped);
    // An error found after the last line (an unclosed bracket) is reported at the code's last line.
    const lines = code.split('\n').length;
    if (c.line !== undefined && c.line > lines) c.line = lines;
    return { error: c.kind === 'throw' ? { ...c, kind: 'compile' } : c };
  }
  result.value.dispose();
  entry.fn = context.getProp(context.global, '__tribunal_run');
  return { entry };
}

function call(entry, inputJson, limits) {
  const { context } = entry;
  const arg = context.newString(inputJson);
  entry.deadline = Date.now() + limits.timeoutMs;
  const result = context.callFunction(entry.fn, context.undefined, arg);
  arg.dispose();
  if (result.error) {
    const dumped = context.dump(result.error);
    result.error.dispose();
    return { error: classify(dumped) };
  }
  const text = context.typeof(result.value) === 'string' ? context.getString(result.value) : '';
  result.value.dispose();
  if (text.length > limits.maxOutputChars) return { error: { kind: 'output', message: `its answer is ${text.length} characters, more than ${limits.maxOutputChars}` } };
  return { output: text };
}

async function handle(msg) {
  const { id, key, code, input, limits, op } = msg;
  let entry = op === 'run' ? entries.get(key) : undefined;
  if (!entry) {
    const made = await create(code, limits);
    if (made.error) return { id, error: made.error };
    entry = made.entry;
    if (op === 'run') {
      if (entries.size >= MAX_RUNTIMES) dispose(entries.keys().next().value);
      entries.set(key, entry);
    }
  } else {
    // Most recently used last.
    entries.delete(key);
    entries.set(key, entry);
  }
  let answer;
  try {
    answer = call(entry, input, limits);
  } catch (e) {
    // The host's own limits (its native stack) stopped the WebAssembly: the runtime is not trusted again.
    answer = { error: { kind: 'stack', message: `the sandbox stopped it (${String(e?.message ?? e).slice(0, 200)})` } };
    if (op === 'run') entries.delete(key);
    else entry.broken = true;
  }
  if (op === 'check' || (answer.error && answer.error.kind !== 'throw')) {
    if (op === 'run') dispose(key);
    else {
      try {
        entry.fn.dispose();
        entry.context.dispose();
        entry.runtime.dispose();
      } catch {
        // see dispose()
      }
    }
  }
  return { id, ...answer };
}

// The host's watchdog starts counting once QuickJS is loaded (a cold start under load is not a stuck run).
quickjs.then(
  () => parentPort.postMessage({ ready: true }),
  () => parentPort.postMessage({ ready: false }),
);

parentPort.on('message', (msg) => {
  handle(msg).then(
    (answer) => parentPort.postMessage(answer),
    (e) => parentPort.postMessage({ id: msg.id, error: { kind: 'crash', message: String(e?.message ?? e).slice(0, 300) } }),
  );
});
