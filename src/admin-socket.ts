// A server that owns a JSON data directory runs `tribunal keys ...` for the CLI, over the store's
// single-writer channel (store/single-writer.ts).
import { runKeyCommand, type KeyCommand } from './key-commands.ts';
import { singleWriter } from './store/single-writer.ts';
import type { Services } from './tool.ts';

export async function startAdminSocket(services: Services, file: string): Promise<{ close: () => Promise<void> }> {
  return singleWriter.serve(file, (command) => runKeyCommand(services.store, services.config, command as KeyCommand));
}
startAdminSocket.pathFor = singleWriter.socketPathFor;
