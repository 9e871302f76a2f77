/**
 * Gives the event loop a turn. Background work on a shared event loop (retention, reconciliation
 * of a big fleet) runs in small slices with a yield between them, so requests waiting on the same
 * loop — on Node, every webhook — are served between slices instead of after the whole job.
 * Host-neutral: a zero-delay timer works the same on Node and in workerd.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
