// BENCH_TIMELINE=1 of bench/cli-eval.bench.ts (issue 33): when each stage of a row's round trip
// happens, recorded in each process of the bench from outside the code it measures, so that the
// product carries no timing code. Loaded into every process with --import (through NODE_OPTIONS);
// each keeps flat arrays of events in memory and writes them to BENCH_TIMELINE_DIR at exit, where
// cli-timeline.ts lines them up. Times are wall-clock (performance.timeOrigin + now()), comparable
// across the processes of one machine.
//
// What each process records (a row is told by the "(case N)" its request text carries):
// - the CLI (`tribunal eval`): its start, each execute request written (send), its answer's last
//   byte read (recv) with the connection's local port, and its exit;
// - the Tribunal server: each execute request's arrival (in), res.end() (out) and 'finish', by the
//   client's port (one request at a time on a keep-alive connection); each model request handed to
//   undici (mout) and its answer complete (min), by case; each execution log's line built (line, by
//   case, when JSON.stringify makes it); each fdatasync's start and end;
// - the fake judge model: each request's arrival and res.end(), and how late each of its latency
//   timers fired.
// The recording costs a few microseconds an event: CPU figures of a timeline run are not the bench's.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';

const dir = process.env.BENCH_TIMELINE_DIR;
const serving = process.argv.indexOf('--serve');
const role = process.argv.includes('eval') ? 'cli' : serving > 0 ? process.argv[serving + 1] : undefined;

if (dir && role) {
  /** Flat triples: time, kind, key (a case number, a port or a duration). */
  const events = [];
  const now = () => performance.timeOrigin + performance.now();
  const rec = (kind, key) => events.push(now(), kind, key);
  const CASE = /\(case (\d+)\)/;
  const caseOf = (text) => Number(CASE.exec(text)?.[1] ?? -1);
  const isExecute = (req) => req.method === 'POST' && /\/execute\/(?:\?|$)/.test(req.url ?? '');

  /** Records `in` at a request's arrival, `out` at res.end() and `finish`, keyed by the client's port. */
  const watchServer = (accept) => {
    const emit = http.Server.prototype.emit;
    http.Server.prototype.emit = function (...args) {
      const [event, req, res] = args;
      if (event === 'request' && accept(req)) {
        const port = req.socket.remotePort;
        rec('in', port);
        const end = res.end;
        res.end = function (...args) {
          rec('out', port);
          return end.apply(this, args);
        };
        res.once('finish', () => rec('finish', port));
      }
      return emit.apply(this, args);
    };
  };

  if (role === 'cli') {
    events.push(performance.timeOrigin, 'start', 0);
    // The CLI's lean client (src/cli/http1.ts) writes a request, head and body, as one string on a
    // kept-alive socket, and reads its answer (Content-Length framed) from that socket's 'data'.
    const write = net.Socket.prototype.write;
    net.Socket.prototype.write = function (data, ...args) {
      const c = typeof data === 'string' && data.startsWith('POST ') ? caseOf(data) : -1;
      if (c > 0) {
        rec('send', c);
        let seen = 0;
        let total = -1;
        const onData = (chunk) => {
          if (total < 0) {
            const head = chunk.toString('latin1');
            const end = head.indexOf('\r\n\r\n');
            total = end + 4 + Number(/content-length: *(\d+)/i.exec(head.slice(0, end))?.[1] ?? 0);
          }
          seen += chunk.length;
          if (seen < total) return;
          this.off('data', onData);
          events.push(now(), 'recv', c, 0, 'port', this.localPort ?? -1);
        };
        this.on('data', onData);
      }
      return write.call(this, data, ...args);
    };
  } else if (role === 'tribunal') {
    watchServer(isExecute);
    const { Pool } = createRequire(import.meta.url)('undici');
    const dispatch = Pool.prototype.dispatch;
    Pool.prototype.dispatch = function (opts, handler) {
      const body = opts.body;
      const c = typeof body === 'string' ? caseOf(body) : body instanceof Uint8Array ? caseOf(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1')) : -1;
      if (c > 0) {
        rec('mout', c);
        const complete = handler.onComplete;
        handler.onComplete = function (...args) {
          rec('min', c);
          return complete.apply(this, args);
        };
      }
      return dispatch.call(this, opts, handler);
    };
    // The execution log's line built (LogFile.add stringifies the record), by case.
    const stringify = JSON.stringify;
    JSON.stringify = function (...args) {
      const text = stringify.apply(this, args);
      if (typeof text === 'string' && text.startsWith('{"id":"log_')) rec('line', caseOf(text));
      return text;
    };
    const fdatasync = fs.fdatasync;
    fs.fdatasync = function (fd, callback) {
      rec('sync', 0);
      return fdatasync.call(this, fd, (err) => {
        rec('synced', 0);
        callback(err);
      });
    };
  } else if (role === 'fake') {
    watchServer((req) => req.method === 'POST');
    const latency = Number(process.env.BENCH_LATENCY ?? 300);
    const setTimer = globalThis.setTimeout;
    globalThis.setTimeout = function (fn, ms, ...args) {
      if (ms !== latency || typeof fn !== 'function') return setTimer.call(this, fn, ms, ...args);
      const due = now() + ms;
      return setTimer.call(
        this,
        (...a) => {
          rec('late', now() - due);
          return fn(...a);
        },
        ms,
        ...args,
      );
    };
  }

  // BENCH_TIMELINE_PROFILE=<role>: a CPU profile of that process too (0.2 ms samples), its start
  // recorded as a 'profile' event so that its samples line up with the events.
  let profiler;
  if (process.env.BENCH_TIMELINE_PROFILE === role) {
    const { Session } = await import('node:inspector');
    profiler = new Session();
    profiler.connect();
    profiler.post('Profiler.enable');
    profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    profiler.post('Profiler.start', () => rec('profile', 0));
  }

  process.on('exit', () => {
    profiler?.post('Profiler.stop', (err, result) => {
      if (!err) fs.writeFileSync(`${dir}/${role}-${process.pid}.cpuprofile`, JSON.stringify(result.profile));
    });
    events.push(now(), 'exit', 0);
    fs.writeFileSync(`${dir}/${role}-${process.pid}.json`, JSON.stringify({ role, events }));
  });
}
