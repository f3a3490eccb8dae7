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
/** @typedef {import('../../../schemas.ts').JurorResult} JurorResult */
/** @typedef {import('../../../schemas.ts').EvaluatorResult} EvaluatorResult */
/** @typedef {import('../../../schemas.ts').ExecutionLog} ExecutionLog */
/** @typedef {import('../../../schemas.ts').ExecutionInput} ExecutionInput */
/** @typedef {import('../../../schemas.ts').ExecutionResult} ExecutionResult */
/** @typedef {import('../../../schemas.ts').ComparisonResult} ComparisonResult */
/** @typedef {import('../../../schemas.ts').ComparisonRecord} ComparisonRecord */
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

/**
 * One page of a list endpoint.
 * @template T
 * @typedef {{ results: T[], next_cursor: string | null }} Page
 */

export {};
