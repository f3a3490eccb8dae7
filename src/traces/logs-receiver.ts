// POST /otel/v1/logs: the OTLP/HTTP logs receiver, beside /otel/v1/traces with the same doors (Api-Key
// or Bearer before a byte is read; the body bounded as sent and as gunzipped; protobuf or JSON; OTLP's
// answers, partial_success, a google.rpc.Status on failure). It keeps the GenAI events that
// instrumentations record as log records (normalize-logs.ts) for their spans; a span and its events
// may arrive in either order (the store merges them when the span is read). Nothing waits for a model:
// a rule's unit that finds its span without content yet looks again shortly (rules/run.ts).
import express, { type Response } from 'express';
import type { Authenticator, Caller } from '../auth.ts';
import type { Config } from '../config.ts';
import { authenticate } from '../http/authenticate.ts';
import type { Store } from '../store/types.ts';
import { countLogRecords } from './metrics.ts';
import { normalizeLogsRequest } from './normalize-logs.ts';
import { OtlpShapeError } from './normalize.ts';
import { decodeLogsRequest, encodeLogsResponse, encodeStatus } from './proto.ts';
import { answerFailure, type Encoding, encodingOf, OtlpError, readOtlpBody } from './receiver.ts';
import { traceStoreOf } from './store.ts';

type Partial = { rejected_log_records: number; error_message: string };

function send(res: Response, encoding: Encoding, status: number, body: { partial?: Partial; error?: { code: number; message: string } }) {
  res.status(status);
  if (encoding === 'protobuf') {
    res.type('application/x-protobuf');
    res.send(Buffer.from(body.error ? encodeStatus(body.error.code, body.error.message) : encodeLogsResponse(body.partial)));
  } else {
    res.type('application/json');
    if (body.error) res.send(JSON.stringify({ code: body.error.code, message: body.error.message }));
    else res.send(JSON.stringify(body.partial ? { partialSuccess: { rejectedLogRecords: body.partial.rejected_log_records, errorMessage: body.partial.error_message } } : {}));
  }
}

function parse(body: Buffer, encoding: Encoding): unknown {
  try {
    return encoding === 'protobuf' ? decodeLogsRequest(body) : JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new OtlpError(
      400,
      3,
      encoding === 'protobuf'
        ? `The body is not a valid OTLP ExportLogsServiceRequest in protobuf: ${(err as Error).message}`
        : `The body is not valid JSON: ${(err as Error).message}`,
    );
  }
}

export function otlpLogsReceiver(config: Config, store: Store, authenticator: Authenticator): express.Router {
  const router = express.Router();
  const { traces } = config;
  router.post('/otel/v1/logs', authenticate(authenticator), async (req, res) => {
    const { type, encoding } = encodingOf(req);
    try {
      const body = await readOtlpBody(req, res, type, traces);
      let normalized;
      try {
        normalized = normalizeLogsRequest(parse(body, encoding));
      } catch (err) {
        if (err instanceof OtlpShapeError) throw new OtlpError(400, 3, `The body is not an OTLP ExportLogsServiceRequest: ${err.message}`);
        throw err;
      }
      const caller = res.locals.caller as Caller;
      // Records from before the retention period would be pruned at once: refused, counted (as spans are).
      const cutoff = ((BigInt(Date.now() - traces.retentionMs) * 1_000_000n).toString() as string).padStart(24, '0');
      const fresh = normalized.events.filter((e) => e.time_unix_nano.padStart(24, '0') >= cutoff);
      if (fresh.length < normalized.events.length)
        normalized.reasons.set('the record is from before the retention period (TRIBUNAL_TRACE_RETENTION)', normalized.events.length - fresh.length);
      const ts = await traceStoreOf(store);
      const kept = await ts.insertLogEvents(caller.org.id, fresh, traces.maxLogEventsPerOrg);
      const rejected = normalized.rejected + (normalized.events.length - fresh.length) + kept.refused;
      countLogRecords(store, { kept: kept.inserted, duplicate: kept.duplicates, rejected, ignored: normalized.ignored, unattached: normalized.unattached });
      const parts = [...normalized.reasons].map(([reason, n]) => `${n} log record(s): ${reason}`);
      if (kept.refused)
        parts.push(
          `${kept.refused} log record(s): the organization holds its maximum of ${traces.maxLogEventsPerOrg} GenAI log records (TRIBUNAL_TRACE_MAX_LOG_RECORDS); older ones leave with the retention period`,
        );
      // A warning with nothing rejected (OTLP allows it): GenAI events that name no span cannot be judged.
      if (normalized.unattached) parts.push(`${normalized.unattached} GenAI log record(s) have no trace_id/span_id and were not kept: emit them inside the span's context`);
      send(res, encoding, 200, parts.length ? { partial: { rejected_log_records: rejected, error_message: parts.join('; ') } } : {});
    } catch (err) {
      answerFailure(req, res, err, 'log records', (status, error) => send(res, encoding, status, { error }));
    }
  });
  return router;
}
