// A loopback OTLP/HTTP receiver for tests: takes protobuf ExportTraceServiceRequests (the
// write-back's) and keeps their spans, decoded with the same official .proto definitions.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeExportRequest } from '../../src/traces/proto.ts';
import { normalizeRequest } from '../../src/traces/normalize.ts';
import type { Span } from '../../src/traces/types.ts';

export interface OtlpSink {
  url: string;
  spans: Span[];
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const spans: Span[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      spans.push(...normalizeRequest(decodeExportRequest(Buffer.concat(chunks))).spans);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
