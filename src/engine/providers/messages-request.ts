// One Messages API request (POST {base}/v1/messages) without the SDK's request layers. A judge run
// makes one such call per evaluator; going through @anthropic-ai/sdk's client (request options,
// header building, its logger, its promise wrappers) cost about a sixth of a judged call's CPU
// (issue 33's profile). This sends the same JSON body the SDK would (JSON.stringify of the
// parameters as UTF-8, its fixed parts serialized once: kept-json.ts) over the same undici fetch (http-fetch.ts: size caps and the address policy), and
// fails with the SDK's own error classes, built the way the SDK builds them, so that
// anthropic-model.ts classifies every failure exactly as before.
import Anthropic from '@anthropic-ai/sdk';
import { type BufferedAnswer, createHttpExchange, type HttpExchange } from './http-fetch.ts';
import type { AddressPolicy } from './address-policy.ts';
import { sdkDeprecationNotice } from './model-check.ts';
import { log } from '../../log.ts';
import { VERSION } from '@anthropic-ai/sdk/version';
import { encodeBody } from './kept-json.ts';

/** The Messages API version the installed SDK sends (its client.mjs buildHeaders). */
const API_VERSION = '2026-10-21';

export interface MessagesEndpointOptions {
  apiKey: string;
  /** Default https://api.anthropic.com (as the SDK, which is given no ANTHROPIC_BASE_URL of its own). */
  baseUrl?: string | null;
  /** The per-request timeout when the caller gives none. */
  timeoutMs: number;
  policy?: AddressPolicy;
}

/** A deprecated model is said once per name and process, as the SDK's create() did. */
const noticed = new Set<string>();
function noticeDeprecation(model: string): void {
  if (noticed.has(model)) return;
  noticed.add(model);
  const notice = sdkDeprecationNotice(model);
  if (notice) log.warn(notice);
}

/** As the SDK tells a timeout from another connection failure. */
const isAbort = (err: unknown) => err instanceof Error && (err.name === 'AbortError' || /timed? ?out/i.test(`${err}${'cause' in err ? String(err.cause) : ''}`));

export class MessagesEndpoint {
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly exchange: HttpExchange;

  constructor(private readonly opts: MessagesEndpointOptions) {
    const base = opts.baseUrl || 'https://api.anthropic.com';
    this.url = new URL(base.endsWith('/') ? `${base}v1/messages` : `${base}/v1/messages`);
    // The headers the SDK sends that the API reads (its key as a bearer token, as the SDK sends it).
    this.headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': `Anthropic/JS ${VERSION}`,
      'anthropic-version': API_VERSION,
      authorization: `Bearer ${opts.apiKey}`,
      // Set here, so that the exchange (which adds it when missing) never changes this shared object.
      'accept-encoding': 'gzip, deflate, br',
    };
    this.exchange = createHttpExchange({ policy: opts.policy });
  }

  /** The Message the API answered (or whatever a 200 carried: the caller checks its shape); SDK errors otherwise. */
  async create(params: Anthropic.MessageCreateParamsNonStreaming, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Anthropic.Message> {
    noticeDeprecation(params.model);
    const { signal } = options;
    if (signal?.aborted) throw new Anthropic.APIUserAbortError();
    let answer: BufferedAnswer;
    try {
      if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') throw new TypeError(`fetch failed: unsupported protocol ${this.url.protocol}`);
      // The timeout is the exchange's own timer; the caller's signal is passed as it is (no controller per call).
      const timeoutMs = options.timeoutMs ?? this.opts.timeoutMs;
      answer = await this.exchange(this.url, { method: 'POST', headers: this.headers, body: encodeBody(params), signal, timeoutMs });
    } catch (err) {
      if (signal?.aborted) throw new Anthropic.APIUserAbortError();
      if (isAbort(err)) throw new Anthropic.APIConnectionTimeoutError();
      throw new Anthropic.APIConnectionError({ cause: err as Error });
    }
    const { status, data } = answer;
    if (status < 200 || status > 299) {
      const text = data.toString('utf8');
      let json: object | undefined;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw Anthropic.APIError.generate(status, json, json ? undefined : text, new Headers(answer.headers));
    }
    if (status === 204) return null as unknown as Anthropic.Message;
    // As the SDK's defaultParseResponse: JSON when the answer says so, else its text.
    const mediaType = answer.header('content-type')?.split(';')[0]?.trim();
    if (mediaType?.includes('application/json') || mediaType?.endsWith('+json')) {
      if (answer.header('content-length') === '0') return undefined as unknown as Anthropic.Message;
      return JSON.parse(data.toString('utf8')) as Anthropic.Message;
    }
    return data.toString('utf8') as unknown as Anthropic.Message;
  }
}
