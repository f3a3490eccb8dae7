// The MCP-style hints every REST-only operation carries (they are never registered with MCP, but the
// definitions share one shape with the tools).
import type { ToolAnnotations } from '../tool.ts';

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
