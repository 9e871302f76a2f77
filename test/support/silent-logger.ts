/** A logger that drops every line, for tests whose output would only be noise. */
import type { Logger } from "../../runtime/log.ts";

export const silentLogger: Logger = { info: () => {}, error: () => {} };
