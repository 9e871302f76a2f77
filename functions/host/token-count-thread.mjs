/**
 * The token-count worker thread of the Node host (functions/host/token-worker.ts): tokenizes the
 * texts it is sent with the same encoding and options as agent/prompt/tokens.ts (cl100k_base, special-
 * token text as plain text) and answers their tokens, so large prompts are tokenized off the
 * event loop that serves webhooks. Plain JavaScript because worker threads do not inherit tsx's
 * loader; test/agent/token-worker.test.ts checks its counts equal agent/prompt/tokens.ts's.
 * Message in: { id, texts }; out: { id, tokens: Uint32Array[] } (transferred, not copied).
 */
import { parentPort } from "node:worker_threads";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";

const plain = { disallowedSpecial: new Set() };

parentPort.on("message", ({ id, texts }) => {
  const tokens = texts.map((text) => Uint32Array.from(text ? encode(text, plain) : []));
  parentPort.postMessage(
    { id, tokens },
    tokens.map((t) => t.buffer),
  );
});
