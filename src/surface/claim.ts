// Claiming a demo judge (SPEC section 16). A judge made with a demo key answers a claim_token; a
// signed-in organization redeems it once and the judge moves, private, into that organization with
// its own evaluators (those of the demo organization; presets and other organizations' public
// evaluators are referenced as they were). The move is a copy under new ids followed by deleting the
// demo originals, the same on both stores; the token is spent only once the copies exist, and of
// two claims at once exactly one wins (the loser's copies are removed again).
import { createHash, randomBytes } from 'node:crypto';
import type { RequestContext } from '../context.ts';
import { permissionDenied, TribunalError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import { resolveProjectId } from '../domain/projects.ts';
import type { EvaluatorRef } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { evaluatorNameTaken, freeName, judgeNameTaken, storeJudgeCopy } from './copy.ts';

type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

const TOKEN_PATTERN = /^clm_[A-Za-z0-9_-]{43}$/;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** For a judge made by a demo organization: a new claim token (shown once), else undefined. */
export async function mintClaimToken(ctx: WriteCtx, judgeId: string): Promise<string | undefined> {
  if (!ctx.caller.org.is_demo) return undefined;
  const token = `clm_${randomBytes(32).toString('base64url')}`;
  const now = new Date();
  // Valid while the demo key is: after that the demo organization (and the judge) may be purged.
  const expires = ctx.caller.key.expires_at ?? new Date(now.getTime() + ctx.config.demoKeyTtlMs).toISOString();
  await ctx.store.createClaimToken({
    token_hash: hashToken(token),
    judge_id: judgeId,
    org_id: ctx.caller.org.id,
    created_at: now.toISOString(),
    expires_at: expires,
    used_at: null,
    used_by_org_id: null,
  });
  return token;
}

const claimError = (status: number, code: 'not_found' | 'conflict' | 'validation_error', detail: string) =>
  new TribunalError(code, status, detail, { errors: [{ field: 'claim_token', message: detail }] });

export interface ClaimResult {
  judge: JudgeRecord;
  previous_judge_id: string;
  evaluators_moved: Array<{ previous_id: string; id: string; name: string }>;
}

export async function claimJudge(ctx: WriteCtx, input: { claim_token: string; project_id?: string }): Promise<ClaimResult> {
  if (ctx.caller.org.is_demo) {
    throw permissionDenied('A demo key cannot claim a judge: claiming moves it into a signed-in organization as private. Use an API key of your own organization.');
  }
  if (!TOKEN_PATTERN.test(input.claim_token)) {
    throw validationError('claim_token is not a claim token: it is the clm_... value a judge made with a demo key answered.', [{ field: 'claim_token', message: 'malformed' }]);
  }
  const hash = hashToken(input.claim_token);
  const token = await ctx.store.getClaimToken(hash);
  if (!token) throw claimError(404, 'not_found', 'This claim token is unknown: check that it was copied whole (tokens are shown once, when the demo judge is made).');
  if (token.used_at) throw claimError(409, 'conflict', `This claim token was used already (at ${token.used_at}); a judge is claimed once.`);
  if (token.expires_at <= new Date().toISOString())
    throw claimError(410, 'validation_error', `This claim token expired at ${token.expires_at}, with the demo key that made the judge.`);
  const judge = await ctx.store.getJudge(token.judge_id);
  if (!judge || judge.org_id !== token.org_id)
    throw claimError(404, 'not_found', 'The demo judge of this claim token no longer exists (it was deleted or its demo organization expired).');
  const projectId = await resolveProjectId(ctx, input.project_id);

  const created: { judge?: JudgeRecord; evaluators: EvaluatorRecord[] } = { evaluators: [] };
  const undo = async () => {
    if (created.judge) await ctx.store.deleteJudge(created.judge.id);
    for (const e of created.evaluators) await ctx.store.deleteEvaluator(e.id);
  };
  try {
    const moved: ClaimResult['evaluators_moved'] = [];
    const refs: EvaluatorRef[] = [];
    for (const ref of judge.evaluators) {
      const source = await ctx.store.getEvaluator(ref.id);
      if (!source || source.org_id !== token.org_id) {
        refs.push({ ...ref });
        continue;
      }
      // The version the judge runs: its pin, else the latest; the copy starts over at version 1.
      const content = ref.version !== null && ref.version !== source.version ? ((await ctx.store.getEvaluatorVersion(ref.id, ref.version)) ?? source) : source;
      const name = (await evaluatorNameTaken(ctx, ctx.caller.org.id)(content.name))
        ? await freeName(evaluatorNameTaken(ctx, ctx.caller.org.id), content.name, 'claimed')
        : content.name;
      const now = new Date().toISOString();
      const copy: EvaluatorRecord = {
        ...content,
        id: newId('evl'),
        org_id: ctx.caller.org.id,
        name,
        visibility: 'private',
        is_preset: false,
        project_id: projectId,
        version: 1,
        created_at: now,
        updated_at: now,
      };
      await ctx.store.createEvaluator(copy);
      created.evaluators.push(copy);
      moved.push({ previous_id: source.id, id: copy.id, name });
      refs.push({ id: copy.id, name, version: ref.version === null ? null : 1 });
    }
    const now = new Date().toISOString();
    const taken = judgeNameTaken(ctx, ctx.caller.org.id);
    created.judge = await storeJudgeCopy(ctx, {
      ...judge,
      id: newId('jdg'),
      org_id: ctx.caller.org.id,
      name: (await taken(judge.name)) ? await freeName(taken, judge.name, 'claimed') : judge.name,
      visibility: 'private',
      project_id: projectId,
      evaluators: refs,
      version: 1,
      created_at: now,
      updated_at: now,
    });
    if (!(await ctx.store.useClaimToken(hash, now, ctx.caller.org.id))) {
      await undo();
      throw claimError(409, 'conflict', 'This claim token was used already, by a claim made at the same time; a judge is claimed once.');
    }
    await removeDemoOriginals(
      ctx,
      judge,
      moved.map((m) => m.previous_id),
    );
    return { judge: created.judge, previous_judge_id: judge.id, evaluators_moved: moved };
  } catch (err) {
    if (!(err instanceof TribunalError)) await undo().catch(() => {});
    throw err;
  }
}

/** The demo judge goes; its evaluators too, unless another judge still applies them. */
async function removeDemoOriginals(ctx: WriteCtx, judge: JudgeRecord, evaluatorIds: string[]): Promise<void> {
  await ctx.store.deleteJudge(judge.id);
  for (const id of evaluatorIds) {
    if (!(await ctx.store.findJudgesUsingEvaluator(id)).length) await ctx.store.deleteEvaluator(id);
  }
}
