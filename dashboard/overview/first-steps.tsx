/**
 * The overview's "what to do next" box on a new or simulated install (issue #38, item 5): connect
 * a provider, install the reporter on the instances, add Slack, each step linking to its quick
 * start and shown only while it is not done (jobs/read-models/first-steps.ts decides); nothing at
 * all once every step is done. The docs are not served by fleetwarden: the links go to the
 * repository's docs on GitHub (DOCS_URL), and each names the file, so a reader with a clone finds it.
 * The provider step shows only on the simulator, so it says the fleet shown is simulated.
 */
import type { FirstStep, FirstSteps } from "../../jobs/read-models/first-steps.ts";

/** Where the repository's docs are read: the links below are `DOCS_URL` + a path in the repository. */
export const DOCS_URL = "https://github.com/fleetwarden/fleetwarden/blob/main/";

const DocLink = ({ path, anchor, children }: { path: string; anchor?: string; children: string }) => (
  <a href={`${DOCS_URL}${path}${anchor ? `#${anchor}` : ""}`} data-doc={path}>
    {children}
  </a>
);

function Step({ step }: { step: FirstStep }) {
  switch (step) {
    case "provider":
      return (
        <li data-step="provider">
          <strong>Connect a provider.</strong>
          {" The fleet shown is simulated. Set the provider's one key ("}
          <code>VAST_API_KEY</code>
          {") and restart: "}
          <DocLink path="docs/quickstart-vast.md" anchor="1-the-one-key">
            Vast.ai quick start (docs/quickstart-vast.md)
          </DocLink>
          {" (or "}
          <DocLink path="docs/quickstart-runpod.md">RunPod</DocLink>
          {", "}
          <DocLink path="docs/quickstart-lambda.md">Lambda Cloud</DocLink>
          {")."}
        </li>
      );
    case "reporter":
      return (
        <li data-step="reporter">
          <strong>Install the reporter on your instances.</strong>
          {" No instance has reported by webhook yet: without reports fleetwarden sees a crash only at its next look. "}
          <DocLink path="docs/quickstart-vast.md" anchor="2-how-instances-report">
            How instances report (docs/quickstart-vast.md)
          </DocLink>
        </li>
      );
    case "channel":
      return (
        <li data-step="channel">
          <strong>Add Slack.</strong>
          {" No Slack, Discord or ntfy channel is configured: approvals and alerts reach nobody outside this dashboard. "}
          <DocLink path="docs/quickstart-vast.md" anchor="3-slack-in-five-steps">
            Slack in five steps (docs/quickstart-vast.md)
          </DocLink>
        </li>
      );
  }
}

export function FirstStepsBox({ steps }: { steps: FirstSteps }) {
  if (steps.todo.length === 0) return null;
  return (
    <section class="first-steps" aria-labelledby="first-steps-heading" data-testid="first-steps">
      <h2 id="first-steps-heading">What to do next</h2>
      <ol>
        {steps.todo.map((step) => (
          <Step step={step} />
        ))}
      </ol>
    </section>
  );
}
