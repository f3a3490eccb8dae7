// h-proxy: the TRIBUNAL_PROXY_UPSTREAMS setting (src/config.ts reads it): upstreams the server's
// operator offers the judge proxy by name, besides each organization's registered models (SPEC 13:
// "or one the server's configuration allows"; docs/PROXY.md). A JSON object
//   {"name": {"base_url": "https://api.openai.com/v1", "model"?: "...", "api_key_env"?: "OPENAI_API_KEY",
//             "price"?: {"input", "output"}, "allow_demo"?: false}}
// The key is read from the variable api_key_env names, so the setting itself holds no secret.
import { z } from 'zod';

const usd = z.number().finite().min(0);
const ProxyUpstreamSchema = z.strictObject({
  base_url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u) && !u.includes('?') && !u.includes('#'), 'must be an http(s) URL without a query or fragment'),
  model: z.string().min(1).optional(),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable')
    .optional(),
  price: z.strictObject({ input: usd, output: usd, cache_read: usd.optional(), cache_write: usd.optional() }).optional(),
  allow_demo: z.boolean().default(false),
});
export const proxyUpstreams = z.string().transform((v, ctx) => {
  let json: unknown;
  try {
    json = JSON.parse(v);
  } catch (e) {
    ctx.addIssue({
      code: 'custom',
      message: `is not valid JSON (${(e as Error).message}); use e.g. {"gpt-4o-mini": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}}`,
    });
    return z.NEVER;
  }
  const parsed = z.record(z.string().min(1).max(200), ProxyUpstreamSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    ctx.addIssue({
      code: 'custom',
      message: `${issue?.path.join('.') || 'the value'}: ${issue?.message}; each entry is {"base_url": <http(s) URL>, "model"?: <upstream model>, "api_key_env"?: <variable holding the key>, "price"?: {"input", "output"}, "allow_demo"?: <boolean>}`,
    });
    return z.NEVER;
  }
  return parsed.data;
});
export type ProxyUpstreamSetting = z.infer<typeof ProxyUpstreamSchema>;

/** A server-configured proxy upstream with its key read from the environment (null: sent without one). */
export interface ProxyUpstream {
  name: string;
  baseUrl: string;
  model: string;
  apiKey: string | null;
  price: ProxyUpstreamSetting['price'] | null;
  allowDemo: boolean;
}

/** Each TRIBUNAL_PROXY_UPSTREAMS entry with its key; a named key variable that is unset is a configuration error. */
export function proxyUpstreamList(setting: Record<string, ProxyUpstreamSetting>, env: Record<string, string | undefined>): Map<string, ProxyUpstream> {
  const out = new Map<string, ProxyUpstream>();
  for (const [name, u] of Object.entries(setting)) {
    const apiKey = u.api_key_env ? env[u.api_key_env] : undefined;
    if (u.api_key_env && !apiKey) throw new Error(`Invalid configuration:\n  TRIBUNAL_PROXY_UPSTREAMS.${name}.api_key_env: the variable ${u.api_key_env} is not set`);
    out.set(name, { name, baseUrl: u.base_url.replace(/\/+$/, ''), model: u.model ?? name, apiKey: apiKey ?? null, price: u.price ?? null, allowDemo: u.allow_demo });
  }
  return out;
}
