// The REST-only operations: definitions like the 14 tools, reached through the same invokeTool, and
// never registered with MCP (tools/index.ts holds the only list MCP reads).
import { deleteFileOperation, getFileOperation, listFilesOperation } from './files.ts'; // h-attach
import { batchExecuteOperation, cancelBatchExecutionOperation, getBatchExecutionOperation, listBatchExecutionsOperation, listBatchResultsOperation } from './batches.ts';
import {
  addDatasetItemsOperation,
  createDatasetOperation,
  deleteDatasetItemOperation,
  deleteDatasetOperation,
  getDatasetItemOperation,
  getDatasetOperation,
  listDatasetItemsOperation,
  listDatasetsOperation,
  updateDatasetItemOperation,
  updateDatasetOperation,
} from './datasets.ts';
import { compareWithEvaluatorOperation, compareWithJudgeOperation } from './compare.ts';
import {
  createAnnotationOperation,
  deleteAnnotationOperation,
  getAnnotationOperation,
  itemsFromAnnotationsOperation,
  listAnnotationsOperation,
  updateAnnotationOperation,
} from './annotations-ops.ts';
import {
  calibrationDemonstrationsOperation,
  getCalibrationRunOperation,
  listCalibrationItemsOperation,
  listCalibrationRunsOperation,
  startCalibrationRunOperation,
} from './calibration.ts';
import { compareBatchesOperation } from './experiments.ts';
import { tryEvaluatorOperation } from './checks.ts'; // h-checks
import { createApiKeyOperation, createDemoUser, listApiKeysOperation, revokeApiKeyOperation } from './keys.ts';
import { listSessionIds, listUserIds } from './logs.ts';
import { createModelOperation, deleteModelOperation, getModelOperation, listModelsOperation, updateModelOperation, verifyModelOperation } from './models.ts';
import { getModelRegistryOperation } from './models.ts'; // issue 26 item 12
import { getSyntheticDataOperation, saveSyntheticDatasetOperation, startSyntheticDataOperation } from './synthetic.ts';
import { claimJudgeOperation, duplicateEvaluatorOperation, duplicateJudgeOperation, executeJudgeByNameOperation } from './surface.ts';
import { refineOperation } from './refine.ts'; // h-proxy
import { getBudgetsOperation, setEvaluatorBudgetOperation } from './budgets.ts';
import { createProjectOperation, deleteEvaluatorOperation, deleteJudgeOperation, listEvaluatorVersions, listJudgeVersions } from './resources.ts';

export const restOnlyOperations = {
  batchExecute: batchExecuteOperation,
  listBatchExecutions: listBatchExecutionsOperation,
  getBatchExecution: getBatchExecutionOperation,
  listBatchResults: listBatchResultsOperation,
  cancelBatchExecution: cancelBatchExecutionOperation,
  listJudgeVersions,
  deleteJudge: deleteJudgeOperation,
  listEvaluatorVersions,
  deleteEvaluator: deleteEvaluatorOperation,
  createProject: createProjectOperation,
  listApiKeys: listApiKeysOperation,
  createApiKey: createApiKeyOperation,
  revokeApiKey: revokeApiKeyOperation,
  createDemoUser,
  listSessionIds,
  listUserIds,
  listDatasets: listDatasetsOperation,
  createDataset: createDatasetOperation,
  getDataset: getDatasetOperation,
  updateDataset: updateDatasetOperation,
  deleteDataset: deleteDatasetOperation,
  listDatasetItems: listDatasetItemsOperation,
  addDatasetItems: addDatasetItemsOperation,
  getDatasetItem: getDatasetItemOperation,
  updateDatasetItem: updateDatasetItemOperation,
  deleteDatasetItem: deleteDatasetItemOperation,
  listModels: listModelsOperation,
  createModel: createModelOperation,
  getModel: getModelOperation,
  updateModel: updateModelOperation,
  deleteModel: deleteModelOperation,
  verifyModel: verifyModelOperation,
  getModelRegistry: getModelRegistryOperation, // issue 26 item 12
  compareWithJudge: compareWithJudgeOperation,
  refine: refineOperation, // h-proxy
  compareWithEvaluator: compareWithEvaluatorOperation,
  listAnnotations: listAnnotationsOperation,
  createAnnotation: createAnnotationOperation,
  getAnnotation: getAnnotationOperation,
  updateAnnotation: updateAnnotationOperation,
  deleteAnnotation: deleteAnnotationOperation,
  itemsFromAnnotations: itemsFromAnnotationsOperation,
  listCalibrationRuns: listCalibrationRunsOperation,
  startCalibrationRun: startCalibrationRunOperation,
  getCalibrationRun: getCalibrationRunOperation,
  listCalibrationItems: listCalibrationItemsOperation,
  calibrationDemonstrations: calibrationDemonstrationsOperation,
  compareBatches: compareBatchesOperation,
  // room surface (issue 30)
  duplicateJudge: duplicateJudgeOperation,
  duplicateEvaluator: duplicateEvaluatorOperation,
  executeJudgeByName: executeJudgeByNameOperation,
  claimJudge: claimJudgeOperation,
  startSyntheticData: startSyntheticDataOperation,
  getSyntheticData: getSyntheticDataOperation,
  saveSyntheticDataset: saveSyntheticDatasetOperation,
  tryEvaluator: tryEvaluatorOperation, // h-checks
  // Budgets (room h-cost)
  getBudgets: getBudgetsOperation,
  setEvaluatorBudget: setEvaluatorBudgetOperation,
  // Attachments (h-attach; the upload is src/files/routes.ts)
  listFiles: listFilesOperation,
  getFile: getFileOperation,
  deleteFile: deleteFileOperation,
};
