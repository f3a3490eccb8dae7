// The judge's side of a proxied call, loaded once and off the upstream's path where that is safe.
// A judge whose evaluators need inputs a chat exchange cannot give must be refused before the
// upstream is called (checkProxyable), which needs its evaluators; judging needs the same evaluators
// and their models. Both come from one engine.prepare (RunOptions.prepared): the run then neither
// reloads the versions nor resolves the models again (it loaded them twice before, once for the
// check and once in the budget gate and the run).
//
// A judge version this process has already seen pass the check is let through at once: its
// evaluators load after the upstream call has left, in parallel with it, and are checked again
// before judging. What that leaves open: an evaluator (not the judge) edited to need contexts since
// the last call of this judge version is caught by that second check, so that one call is answered
// with `tribunal.error` instead of refused, and the next is refused. An unknown judge, a draft, and a
// judge version not seen pass are still refused before any upstream call.
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import type { PreparedRun } from '../runs/types.ts';
import type { JudgeRecord } from '../store/types.ts';
import type { Services } from '../tool.ts';
import { checkProxyable } from './judging.ts';

type Ctx = RequestContext & Pick<Services, 'engine'>;

/** Judge versions (id, version, last change) whose evaluators passed checkProxyable in this process. */
const passed = new Set<string>();
const versionOf = (judge: JudgeRecord) => `${judge.id}@${judge.version}@${judge.updated_at}`;

function remember(judge: JudgeRecord): void {
  if (passed.size >= 1000) passed.delete(passed.values().next().value!);
  passed.add(versionOf(judge));
}

/** The judge's evaluators and models for one proxied exchange. */
export class JudgePrep {
  private loading: Promise<PreparedRun | null> | undefined;

  private constructor(
    private readonly ctx: Ctx,
    private readonly judge: JudgeRecord,
    loaded: PreparedRun | null | undefined,
  ) {
    if (loaded !== undefined) this.loading = Promise.resolve(loaded);
  }

  /**
   * Before the upstream call: a judge version seen to pass goes on at once; any other is loaded and
   * checked now (throws the refusal, or a 409 for a missing or private evaluator, as the run would).
   */
  static async open(ctx: Ctx, judge: JudgeRecord): Promise<JudgePrep> {
    if (passed.has(versionOf(judge))) return new JudgePrep(ctx, judge, undefined);
    let prepared: PreparedRun | null = null;
    try {
      prepared = await ctx.engine.prepare(ctx, { judge });
    } catch {
      // The models could not be resolved (or an evaluator is gone): the run reports that when it
      // judges, as it always has; an evaluator problem is thrown by the load just below.
    }
    checkProxyable(judge, prepared?.evaluators ?? (await loadJudgeEvaluators(ctx, judge)));
    remember(judge);
    return new JudgePrep(ctx, judge, prepared);
  }

  /** Starts the load once the upstream request is on its way (the next turn of the event loop). */
  start(): void {
    if (this.loading) return;
    this.loading = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.load());
    // Judging awaits it and gets the refusal; an exchange that ends before judging (the upstream
    // failed, the client left) never does, and that is no unhandled rejection.
    this.loading.catch(() => {});
  }

  /** For judging: the prepared run (null: let the run load it and report what fails), or the refusal. */
  prepared(): Promise<PreparedRun | null> {
    this.start();
    return this.loading!;
  }

  private async load(): Promise<PreparedRun | null> {
    let prepared: PreparedRun;
    try {
      prepared = await this.ctx.engine.prepare(this.ctx, { judge: this.judge });
    } catch {
      // An evaluator gone or made private since (or the models unresolvable): the run reports it
      // for this call, and the next call of this judge version is checked before its upstream again.
      passed.delete(versionOf(this.judge));
      return null;
    }
    try {
      checkProxyable(this.judge, prepared.evaluators);
    } catch (err) {
      passed.delete(versionOf(this.judge));
      throw err;
    }
    return prepared;
  }
}
