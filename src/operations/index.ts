// The REST-only operations: definitions like the 14 tools, reached through the same invokeTool, and
// never registered with MCP (tools/index.ts holds the only list MCP reads).
import { createApiKeyOperation, createDemoUser, listApiKeysOperation, revokeApiKeyOperation } from './keys.ts';
import { createModelOperation, deleteModelOperation, getModelOperation, listModelsOperation, updateModelOperation, verifyModelOperation } from './models.ts';
import { createProjectOperation, deleteEvaluatorOperation, deleteJudgeOperation, listEvaluatorVersions, listJudgeVersions } from './resources.ts';

export const restOnlyOperations = {
  listJudgeVersions,
  deleteJudge: deleteJudgeOperation,
  listEvaluatorVersions,
  deleteEvaluator: deleteEvaluatorOperation,
  createProject: createProjectOperation,
  listApiKeys: listApiKeysOperation,
  createApiKey: createApiKeyOperation,
  revokeApiKey: revokeApiKeyOperation,
  createDemoUser,
  listModels: listModelsOperation,
  createModel: createModelOperation,
  getModel: getModelOperation,
  updateModel: updateModelOperation,
  deleteModel: deleteModelOperation,
  verifyModel: verifyModelOperation,
};
