// The claim_token a judge made with a demo key answers (create_judge, generate_judge; SPEC section 16).
import { z } from 'zod';
import type { RequestContext } from '../context.ts';
import { mintClaimToken } from './claim.ts';

export const ClaimTokenField = {
  claim_token: z
    .string()
    .optional()
    .describe('only for a judge made with a demo key: redeem it once with POST /v1/judges/claim/ (with a key of your own organization) to move the judge there as private'),
};

/** The answer with a new claim token for judge `judgeId` when the caller is a demo organization. */
export async function withClaimToken<T extends object>(
  ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>,
  judgeId: string,
  answer: T,
): Promise<T & { claim_token?: string }> {
  const token = await mintClaimToken(ctx, judgeId);
  return token ? { ...answer, claim_token: token } : answer;
}
