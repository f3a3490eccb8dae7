// The wire shapes of every resource (SPEC section 1). These zod schemas are the single source of
// truth: TypeScript types, MCP output schemas and the OpenAPI document are all derived from them.
// They live in src/schemas/ by area; this module gathers the common ones so callers import one place
// (batches, calibration, proxy and checks are imported from their own files).
export * from './schemas/core.ts';
export * from './schemas/models.ts';
export * from './schemas/datasets.ts';
export * from './schemas/comparison.ts';
