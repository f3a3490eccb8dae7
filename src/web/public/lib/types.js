// The shapes the REST API answers with, for the JSDoc types of the pages. Types only: nothing here
// runs, and no page imports this file at run time (JSDoc `import()` types vanish). Each shape is
// the server's own zod-derived type from src/schemas*, so a field the server renames fails the web
// type check (tsconfig.web.json) instead of a page.

/** @typedef {import('../../../schemas.ts').ApiKey} ApiKey */
/** @typedef {import('../../../schemas.ts').Project} Project */
/** @typedef {import('../../../schemas.ts').Turn} Turn */
/** @typedef {import('../../../schemas.ts').ToolCall} ToolCall */
/** @typedef {import('../../../schemas.ts').Demonstration} Demonstration */
/** @typedef {import('../../../schemas.ts').Evaluator} Evaluator */
/** @typedef {import('../../../schemas.ts').EvaluatorRef} EvaluatorRef */
/** @typedef {import('../../../schemas.ts').Judge} Judge */
/** @typedef {import('../../../schemas.ts').JudgeFull} JudgeFull */
/** @typedef {import('../../../schemas.ts').GenerationQuestion} GenerationQuestion */
/** @typedef {import('../../../schemas.ts').JurorResult} JurorResult */
/** @typedef {import('../../../schemas.ts').EvaluatorResult} EvaluatorResult */
/** @typedef {import('../../../schemas.ts').ExecutionLog} ExecutionLog */
/** @typedef {import('../../../schemas.ts').ExecutionInput} ExecutionInput */
/** @typedef {import('../../../schemas.ts').ExecutionResult} ExecutionResult */
/** @typedef {import('../../../schemas.ts').ComparisonResult} ComparisonResult */
/** @typedef {import('../../../schemas.ts').ComparisonRecord} ComparisonRecord */
/** @typedef {import('../../../schemas.ts').ComparisonEvaluatorResult} ComparisonEvaluatorResult */
/** @typedef {import('../../../schemas.ts').ComparisonInput} ComparisonInput */

/** @typedef {import('../../../schemas.ts').Model} Model */
/** @typedef {import('../../../schemas.ts').Dataset} Dataset */
/** @typedef {import('../../../schemas.ts').DatasetItem} DatasetItem */
/** @typedef {import('../../../schemas/batches.ts').BatchExecution} BatchExecution */
/** @typedef {import('../../../schemas/batches.ts').BatchRow} BatchRow */
/** @typedef {import('../../../schemas/batches.ts').BatchEvaluatorSummary} BatchEvaluatorSummary */
/** @typedef {import('../../../schemas/calibration.ts').Annotation} Annotation */
/** @typedef {import('../../../schemas/calibration.ts').CalibrationMetrics} CalibrationMetrics */
/** @typedef {import('../../../schemas/calibration.ts').CalibrationRun} CalibrationRun */
/** @typedef {import('../../../schemas/calibration.ts').CalibrationSummary} CalibrationSummary */
/** @typedef {import('../../../schemas/checks.ts').Check} Check */
/** @typedef {import('../../../schemas/files.ts').FileObject} FileObject */

// Evaluation rules (src/traces/rules/types.ts): that module reaches into server-only code (node:crypto
// through the span types), so its shapes are copied here field for field.
/** @typedef {{ field: string, op: 'eq' | 'ne' | 'in' | 'contains' | 'exists' | 'gt' | 'lt', value?: string | number | boolean | Array<string | number | boolean> }} FilterCondition */
/** @typedef {{ matched: number, sampled: number, queued: number, running: number, done: number, failed: number, skipped: Record<string, number>, oldest_queued_age_s: number | null, backlog: boolean }} RuleStatus */
/**
 * A rule as GET /v1/rules/ answers it: the rule with its live status (RuleOut of
 * src/traces/rules/operations.ts). `extractor` is the ExtractorRule of src/traces/extract/rules.ts.
 * @typedef {{ id: string, name: string, judge_id: string | null, evaluator_id: string | null, scope: 'span' | 'trace' | 'session', filter: FilterCondition[], sampling_rate: number, delay_seconds: number, budget: { max_runs_per_day?: number, max_cost_usd_per_day?: number } | null, active: boolean, extractor: Record<string, unknown> | null, queue_limit: number, shed_policy: 'drop_oldest' | 'drop_newest', created_at: string, updated_at: string, status: RuleStatus }} Rule
 */

/**
 * A judge or an evaluator as its own GET answers it: with the calibration summary of its current
 * version (src/calibration/summary.ts; null when no calibration run measured it).
 * @typedef {JudgeFull & { calibration: CalibrationSummary }} JudgeView
 * @typedef {Evaluator & { calibration: CalibrationSummary }} EvaluatorView
 */

/**
 * What an evaluation would judge
 from a span: the `Extracted` interface of
 * src/traces/extract/index.ts, copied because that module reaches into server-only code.
 * @typedef {{ source: string, request?: string, response: string, system_prompt?: string, turns?: Turn[], contexts?: string[], tool_call?: { name: string, arguments: string, result: string | null }, model?: string }} Extracted
 */

/**
 * One labelled item of a calibration run with the judge's score: `RunItem` of
 * src/calibration/runs.ts (server-only code, so copied here).
 * @typedef {{ item_id: string, evaluator_id: string, expected: number, score: number | null, justification: string | null, execution_log_id: string | null, confidence: number | null, difference: number | null, note: string | null }} CalibrationItem
 */

/**
 * What POST /v1/evaluation-rules/{id}/test/ answers (src/traces/rules/operations.ts): per span, the
 * inputs a run would get (an extraction, typed there as a plain record) or why there are none.
 * @typedef {{ matched_spans: number, results: Array<{ trace_id: string, span_id: string, span_name: string, service_name: string | null, sampled: boolean, would_judge: Extracted | null, reason: string | null }> }} RuleTest
 */

/**
 * GET /v1/judges/batch-executions/compare/ (ExperimentComparison of src/operations/experiments.ts):
 * the comparison of src/batch/experiments.ts with a brief of each run.
 * @typedef {{ id: string, judge_id: string | null, judge_version: number | null, evaluator_id: string | null, dataset_id: string | null, status: string, total: number, done: number, failed: number }} RunBrief
 * @typedef {import('../../../batch/experiments.ts').Comparison & { a: RunBrief, b: RunBrief }} ExperimentComparison
 * @typedef {import('../../../batch/experiments.ts').EvaluatorComparison} EvaluatorComparison
 */

// Traces (src/traces/operations.ts; the span shape is Span of src/traces/types.ts, a module that
// needs node:crypto, so these are copied field for field).
/** @typedef {{ trace_id: string, root_span_name: string | null, service_name: string | null, start_time: string, end_time: string, span_count: number, error_count: number, evaluation_count: number }} TraceSummary */
/** @typedef {{ execution_log_id: string, rule_id: string | null, name: string, score: number | null, created_at: string }} SpanEvaluationView one evaluation linked to a span */
/**
 * One span of GET /v1/traces/{id}/: the span, its depth in the tree, what a run would judge from it
 * (an extraction; a plain record on the wire) or why nothing, and its evaluations.
 * @typedef {{ trace_id: string, span_id: string, parent_span_id: string | null, name: string, kind: string, service_name: string | null, start_time: string, end_time: string, start_time_unix_nano: string, end_time_unix_nano: string, status: { code: 'unset' | 'ok' | 'error', message: string | null }, attributes: Record<string, unknown>, resource_attributes: Record<string, unknown>, received_at: string, depth: number, extracted: Extracted | null, unreadable: string | null, evaluations: SpanEvaluationView[] }} TraceSpan
 */

/**
 * A review queue (ReviewQueue of src/review/ops.ts, server code, so copied here; `sources` left out:
 * no page reads it).
 * @typedef {{ id: string, name: string, judge_id: string | null, evaluator_ids: string[], annotators_per_item: number, lease_seconds: number, show_justification: boolean, counts: { queued: number, leased: number, done: number, skipped: number }, agreement: Array<{ evaluator_id: string, alpha: number | null, n_items: number, n_annotations: number }>, created_at: string, updated_at: string }} ReviewQueue
 */

/**
 * A judge's test data (SyntheticData of src/operations/synthetic.ts, server code, so copied here).
 * @typedef {{ quality: 'high' | 'low', request: string, response: string, contexts?: string[], expected_output?: string, fails_evaluator?: string | null, failure?: string | null }} SyntheticSample
 * @typedef {{ judge_id: string, status: 'pending' | 'ready' | 'not_generated', name: string, description: string, samples: SyntheticSample[], error: string | null, requested_at: string | null, updated_at: string | null }} SyntheticData
 */

/**
 * What POST /v1/judges/generate/ answers




: GenerateJudgeOutput of src/generation/types.ts (a module
 * that also names the server's request context, so copied here).
 * @typedef {{ judge_id?: string, evaluator_details?: Array<{ id: string, name: string, intent: string, is_preset: boolean }>, error_code?: 'missing_context_from_system_goal' | 'multiple_stages', missing_context_from_system_goal?: GenerationQuestion[], stages?: string[] }} GenerateJudgeOutput
 */

/**
 * One page of a list endpoint.



 * @template T
 * @typedef {{ results: T[], next_cursor: string | null }} ListPage
 */

/**
 * The signed-in session as GET /app/session answers it (src/web/router.ts).
 * @typedef {{ signed_in: true, csrf_token: string, session_expires_at: string, organization: { id: string, name: string, is_demo: boolean }, key: { id: string, name: string, prefix: string, expires_at: string | null } }} Session
 */

/**
 * What app.js hands every page: the session, navigation and one-off notices.
 * @typedef {object} App
 * @property {Session | null} session
 * @property {() => Promise<Set<string>>} ownProjectIds ids of the caller's own projects
 * @property {(resource: { project_id?: string | null }) => Promise<boolean>} isOwn whether the caller may edit it
 * @property {(node: Node | string) => void} flash a notice shown once at the top of the next page
 * @property {(path: string, opts?: { replace?: boolean }) => void} navigate
 * @property {(session: Session | { signed_in: false, reason?: string } | null) => void} setSession keeps only a signed-in session
 * @property {() => Promise<void>} signOut
 */

/**
 * The element a page fills: its append leaves out null, undefined and false (app.js), so a page
 * can append `cond ? node : null`.
 * @typedef {Omit<HTMLElement, 'append'> & { append: (...nodes: import('./dom.js').Child[]) => void }} PageElement
 */

/**
 * A page: it fills `page` for the address's params and query.
 * @typedef {{ params: Record<string, string>, query: URLSearchParams, app: App, isCurrent: () => boolean }} PageContext
 * @typedef {(page: PageElement, ctx: PageContext) => Promise<void>} Page
 */

export {};
