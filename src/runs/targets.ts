// The models a run scores with (SPEC section 11): each evaluator's `model` (each juror of a jury) is
// a registered model of the caller's organization when it names one (another organization's models
// are never found), else the server's model. The registered models' clients are kept in one pool
// (providers/index.ts) so their limits hold across runs.
import type { Config } from '../config.ts';
import type { RequestContext } from '../context.ts';
import { scoresWithoutModel } from '../checks/score.ts';
import { checkBaseUrl, modelApiKey, registeredModelNamed } from '../domain/models.ts';
import { RegisteredModelPool, strategyFor } from '../engine/providers/index.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import { ModelCallError } from '../engine/providers/model-errors.ts';
import type { ModelCallObserver } from '../engine/providers/resilient-model.ts';
import { requireModel, type ScoringTarget } from '../engine/target.ts';
import type { EvaluatorRecord } from '../store/types.ts';

/** Stands in for a model name that is neither registered in the caller's organization nor allowed. */
const unknownModel = (name: string): JudgeModel => ({
  configured: true,
  call: async () => {
    throw new ModelCallError(
      'rejected',
      `The evaluator's model ${JSON.stringify(name)} is neither registered in your organization (GET /v1/models/) nor allowed on this server; register it or set the evaluator's model to another.`,
    );
  },
});

export class Targets {
  private readonly registered: RegisteredModelPool;
  private readonly serverTargets = new WeakMap<Config, Map<string, ScoringTarget>>();

  constructor(
    /** The server's judge model. */
    readonly model: JudgeModel,
    observer?: ModelCallObserver,
  ) {
    this.registered = new RegisteredModelPool(observer);
  }

  /** Each model name's target, for every evaluator that scores with a model. */
  async resolve(ctx: RequestContext, evaluators: EvaluatorRecord[]): Promise<Map<string, ScoringTarget>> {
    const targets = new Map<string, ScoringTarget>();
    // A jury's every juror is a target of its own (jury.ts). Check and code evaluators need no model.
    for (const evaluator of evaluators) {
      if (scoresWithoutModel(evaluator)) continue;
      for (const name of evaluator.models?.length ? evaluator.models : [evaluator.model ?? '']) {
        // No name is the server's model, which needs no lookup: no await for it (a promise per run).
        if (!targets.has(name)) targets.set(name, name ? await this.targetOf(ctx, name) : this.serverTarget(ctx.config, name));
      }
    }
    return targets;
  }

  private async targetOf(ctx: RequestContext, name: string): Promise<ScoringTarget> {
    const record = name ? await registeredModelNamed(ctx, name) : null;
    if (!record) {
      // A registered model deleted since (or another organization's): a clear error, not a call to the server's provider.
      const known = !name || ctx.config.model.allowed.includes(name);
      return known ? this.serverTarget(ctx.config, name) : this.unknownTarget(ctx.config, name);
    }
    // TRIBUNAL_MODEL_HOSTS may have narrowed since the model was registered.
    checkBaseUrl(ctx, record.base_url, record.provider);
    return {
      model: this.registered.judgeModel(ctx.config, record, modelApiKey(ctx, record)),
      modelName: record.model,
      // No price given: the cost is unknown (null), never a silent 0.
      prices: record.price ? { [record.model]: record.price } : {},
      strategy: strategyFor(record.capabilities),
      temperature: 0,
      capabilities: record.capabilities,
      provider: record.provider,
      identity: `${record.id}@${record.updated_at}`,
      attachments: record.supports_attachments === true,
    };
  }

  /**
   * The server's model under a name it allows: the same for every run of one configuration, so it is
   * made once per configuration and name (frozen: a run never changes its targets, a provider batch
   * retargets a copy).
   */
  private serverTarget(config: Config, name: string): ScoringTarget {
    let byName = this.serverTargets.get(config);
    if (!byName) this.serverTargets.set(config, (byName = new Map()));
    let target = byName.get(name);
    if (!target) {
      const modelName = name || config.model.name;
      target = Object.freeze({
        model: this.model,
        modelName,
        prices: config.model.prices,
        temperature: 0,
        provider: 'anthropic' as const,
        identity: `server:${modelName}`,
        attachments: config.model.attachments,
      });
      byName.set(name, target);
    }
    return target;
  }

  private unknownTarget(config: Config, name: string): ScoringTarget {
    return {
      model: unknownModel(name),
      modelName: name,
      prices: config.model.prices,
      temperature: 0,
      provider: 'anthropic',
      identity: `server:${name}`,
      // An unknown model fails with its own clear error; attachments are not what to report then.
      attachments: true,
    };
  }

  /** Refuses (model_unavailable) when a target is the server's model and none is configured. */
  requireModels(targets: ReadonlyMap<string, ScoringTarget>): void {
    for (const target of targets.values()) {
      if (target.model === this.model) return requireModel(this.model);
    }
  }
}
