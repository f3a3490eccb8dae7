// A large JSONL import streamed to a server process, with that process's RSS sampled throughout:
// shared by the import memory test and bench/dataset-import.bench.ts.
import fs from 'node:fs';

/** Resident set size of a process, from /proc (Linux). */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** `count` JSONL lines, made as the upload asks for them (never held whole here either). */
export function jsonlStream(count: number, fillerChars: number): ReadableStream<Uint8Array> {
  const filler = 'x'.repeat(fillerChars);
  const encoder = new TextEncoder();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= count) return controller.close();
      const lines: string[] = [];
      for (let i = 0; i < 200 && sent < count; i++, sent++) lines.push(JSON.stringify({ response: `answer ${sent}`, request: `question ${sent} ${filler}`, tags: ['bulk'] }));
      controller.enqueue(encoder.encode(`${lines.join('\n')}\n`));
    },
  });
}

export interface ImportRun {
  status: number;
  body: any;
  idleRss: number;
  peakRss: number;
  seconds: number;
}

/** Imports `count` lines into a new dataset on the server at `url` (process `pid`), sampling its RSS. */
export async function measureImport(url: string, pid: number, key: string, count: number, fillerChars: number): Promise<ImportRun> {
  const headers = { authorization: `Api-Key ${key}` };
  const created = await fetch(`${url}/v1/datasets/`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `import ${Date.now()}` }),
  });
  const dataset = (await created.json()) as { id: string };
  const idleRss = rssOf(pid);
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(pid))), 25);
  const started = performance.now();
  try {
    const res = await fetch(`${url}/v1/datasets/${dataset.id}/items/import/`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body: jsonlStream(count, fillerChars),
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: kept as text for the report */
    }
    return { status: res.status, body, idleRss, peakRss, seconds: (performance.now() - started) / 1000 };
  } finally {
    clearInterval(sampler);
  }
}
