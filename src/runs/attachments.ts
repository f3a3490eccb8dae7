// Attachments on a run (h-attach; docs/SURFACE.md, "Attachments"): loading them and checking the
// run's models take them; the prompt's note is engine/attachments.ts. The file ids of `attachments`
// are loaded from the caller's organization before anything else happens (an unknown id is a 404
// naming it), every evaluator that scores with a model is checked to have models that take them
// (else a 400 before any call), and the prompt says what was attached. The providers turn them into
// their own content parts (anthropic-model.ts, providers/openai.ts).
//
// The capability rule: the server's own model takes attachments unless TRIBUNAL_MODEL_ATTACHMENTS=false
// (every current Claude model reads images and PDFs); a registered model only when it was registered
// with `supports_attachments: true` (a local model rarely takes images, so it is never assumed).
// Check and code evaluators judge text and never see attachments.
import type { RequestContext } from '../context.ts';
import { TribunalError } from '../errors.ts';
import { scoresWithoutModel } from '../checks/score.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import type { ModelAttachment } from '../engine/providers/model.ts';

/** All attachments of one run together: they go into one request (Anthropic takes at most 32 MB a request, in base64). */
export const MAX_RUN_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** The files named by `attachments`, in order (a repeated id once); undefined when there are none. */
export async function loadAttachments(ctx: Pick<RequestContext, 'store' | 'caller'>, ids: readonly string[] | undefined): Promise<ModelAttachment[] | undefined> {
  if (!ids?.length) return undefined;
  const orgId = ctx.caller.org.id;
  const unique = [...new Set(ids)];
  const records = await Promise.all(unique.map((id) => ctx.store.files.get(orgId, id)));
  const missing = unique.filter((_, i) => !records[i]);
  if (missing.length) {
    throw new TribunalError(
      'not_found',
      404,
      `attachments: no file ${missing.map((id) => JSON.stringify(id)).join(', ')} in your organization; upload it with POST /v1/files/ and pass the id it answers. Nothing was run.`,
      { errors: missing.map((id) => ({ field: `attachments.${ids.indexOf(id)}`, message: `no file ${id} in your organization` })) },
    );
  }
  const total = records.reduce((n, r) => n + r!.bytes, 0);
  if (total > MAX_RUN_ATTACHMENT_BYTES) {
    throw new TribunalError(
      'payload_too_large',
      413,
      `The attachments of this run are ${total} bytes together, over ${MAX_RUN_ATTACHMENT_BYTES} (20 MB); attach fewer or smaller files.`,
      {
        extra: { limit: 'run_attachment_bytes', limit_value: MAX_RUN_ATTACHMENT_BYTES },
      },
    );
  }
  const out: ModelAttachment[] = [];
  for (const record of records) {
    const data = await ctx.store.files.read(orgId, record!.id);
    if (!data) throw new TribunalError('not_found', 404, `attachments: file ${record!.id} was deleted while this run started; upload it again.`);
    out.push({ name: record!.name, content_type: record!.content_type, sha256: record!.sha256, data: data.toString('base64') });
  }
  return out;
}

/** What a scoring target tells about attachments (engine/target.ts's ScoringTarget). */
interface AttachmentTarget {
  modelName: string;
  attachments?: boolean;
}

/** Refuses the run, before any model call, when an evaluator scores with a model that cannot take the attachments. */
export function checkAttachmentTargets(evaluators: EvaluatorRecord[], targets: ReadonlyMap<string, AttachmentTarget>, attached: ModelAttachment[] | undefined): void {
  if (!attached?.length) return;
  const refused: string[] = [];
  for (const e of evaluators) {
    if (scoresWithoutModel(e)) continue;
    for (const name of e.models?.length ? e.models : [e.model ?? '']) {
      const target = targets.get(name);
      if (target && !target.attachments) refused.push(`evaluator ${e.name} scores with ${target.modelName}`);
    }
  }
  if (!refused.length) return;
  throw new TribunalError(
    'validation_error',
    400,
    `This run has attachments, but ${[...new Set(refused)].join('; ')}, which does not take images or documents. Register a model that does with supports_attachments: true (PATCH /v1/models/{id}/), choose it as the evaluator's model, or run without attachments. Nothing was run.`,
    { errors: [{ field: 'attachments', message: 'a model of this run does not take attachments' }] },
  );
}
