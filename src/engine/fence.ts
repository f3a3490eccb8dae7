// The fence every piece of untrusted data is shown to the judge model in (docs/SCORING.md): a tag
// whose name ends in a random nonce made for this one call, around XML-escaped text. Scoring's
// prompt and the conversation renderer both fence through here, so turns, tool calls and tool
// results get exactly the escaping and nonce scheme that responses get.
import { randomHex } from '../ids.ts';

/** 96 random bits, hex: unguessable, and only [0-9a-f] so it is safe in a tag name. */
export const newNonce = () => randomHex(12);

/** XML escaping for fenced data: after it, the data holds no `<` or `>`, so no tag at all. */
export const escapeData = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Escaping for a value inside a fence tag's attribute: no tag, and no `"` to end the value early. */
export const escapeAttribute = (text: string) => escapeData(text).replace(/"/g, '&quot;');

/** `<name_nonce attrs>` + escaped text + `</name_nonce>`, the text on its own lines. */
export function fence(name: string, nonce: string, text: string, attrs = ''): string {
  return `<${name}_${nonce}${attrs}>\n${escapeData(text)}\n</${name}_${nonce}>`;
}
