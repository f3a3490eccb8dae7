// Write-back: an evaluation result as an OTLP span, child of the judged span, carrying the
// gen_ai.evaluation.* attributes (OpenTelemetry GenAI semantic conventions), posted as OTLP/HTTP
// protobuf to TRIBUNAL_EVAL_EXPORT_OTLP_ENDPOINT, so the score shows beside the trace in the user's
// own backend (Jaeger, Tempo, Langfuse, Phoenix).
import { randomBytes } from 'node:crypto';
import type { ExecutionResult } from '../../schemas.ts';
import { encodeExportRequest } from '../proto.ts';
import type { SpanRecord } from '../types.ts';

const str = (key: string, v: string) => ({ key, value: { string_value: v } });
const dbl = (key: string, v: number) => ({ key, value: { double_value: v } });

export function evaluationSpan(judged: SpanRecord, name: string, result: ExecutionResult, now = Date.now()) {
  const label = result.score === null ? 'not_applicable' : result.score >= 0.5 ? 'pass' : 'fail';
  const explanation = result.evaluator_results.map((r) => `${r.evaluator_name}: ${r.justification ?? ''}`.trim()).join('\n');
  const end = BigInt(now) * 1_000_000n;
  const attributes = [
    str('gen_ai.evaluation.name', name),
    ...(result.score !== null ? [dbl('gen_ai.evaluation.score.value', result.score)] : []),
    str('gen_ai.evaluation.score.label', label),
    str('gen_ai.evaluation.explanation', explanation.slice(0, 8000)),
    str('tribunal.execution_log_id', result.execution_log_id),
  ];
  return {
    resource_spans: [
      {
        resource: { attributes: [str('service.name', judged.service_name ?? 'unknown_service'), str('tribunal.role', 'evaluator')] },
        scope_spans: [
          {
            scope: { name: 'tribunal', version: '1' },
            spans: [
              {
                trace_id: Buffer.from(judged.trace_id, 'hex'),
                span_id: randomBytes(8),
                parent_span_id: Buffer.from(judged.span_id, 'hex'),
                name: `evaluation ${name}`,
                kind: 1,
                start_time_unix_nano: (end - BigInt(Math.round(result.latency_ms * 1e6))).toString(),
                end_time_unix_nano: end.toString(),
                attributes,
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  };
}

export async function writeBack(endpoint: string, judged: SpanRecord, name: string, result: ExecutionResult): Promise<void> {
  const body = encodeExportRequest(evaluationSpan(judged, name, result));
  const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array(body), signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${endpoint} answered ${res.status}`);
  await res.arrayBuffer();
}
