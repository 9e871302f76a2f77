/**
 * The reporter setup on an instance's page (operators only): a button that POSTs for the
 * instance's own reporter key, environment and install command (jobs/reporter/reporter-setup.ts,
 * the same as GET /api/agents/:agent/instances/:id/reporter, audited as `reporter_key`). A post,
 * not a link: the key is never part of a page a GET could bring back from a cache or history,
 * and the answer is sent `Cache-Control: no-store`.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { reporterSetup, type ReporterSetup } from "../../jobs/reporter/reporter-setup.ts";
import { CsrfField } from "../shell/layout.tsx";
import { frameFor, sendPage } from "../shell/render.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";

const reporterUrl = (instanceId: string) => `/fleet/${encodeURIComponent(instanceId)}/reporter`;

export function ReporterRevealForm(props: { instanceId: string; csrf: string }) {
  return (
    <form method="post" action={reporterUrl(props.instanceId)} class="inline-form">
      <CsrfField token={props.csrf} />
      <button type="submit">Reporter setup</button>
      <span class="hint">{" this instance's own reporting key and install command (shown once per click, logged)"}</span>
    </form>
  );
}

export function ReporterSetupPanel(props: { instanceId: string; setup: ReporterSetup }) {
  const { setup } = props;
  return (
    <section class="panel" aria-labelledby="reporter-setup">
      <h2 id="reporter-setup">{`Reporter for ${props.instanceId}`}</h2>
      <p>
        {"Run this once on the instance, or paste it into a Vast.ai on-start script or a RunPod start command. "}
        {"The key reports for this instance only and changes when the agent's webhook secret is rotated. "}
        {"docs/reporting.md explains what is sent."}
      </p>
      <h3>Command</h3>
      <pre class="reporter-command">{setup.command}</pre>
      <h3>Environment</h3>
      <pre class="reporter-env">
        {Object.entries(setup.env)
          .map(([name, value]) => `${name}=${value}`)
          .join("\n")}
      </pre>
      <p>
        <a href={`/fleet/${encodeURIComponent(props.instanceId)}`}>{`← Instance ${props.instanceId}`}</a>
      </p>
    </section>
  );
}

/** POST /fleet/:instanceId/reporter (origin-, CSRF- and operator-checked by the routes). */
export async function postReporterSetup(c: Context<AppEnv>) {
  const instanceId = c.req.param("instanceId") ?? "";
  const setup = await reporterSetup(c.get("deps"), c.get("operator"), {
    agentId: selectedAgentId(c),
    instanceId,
    origin: new URL(c.req.url).origin,
  });
  const frame = await frameFor(c);
  c.header("Cache-Control", "no-store");
  return sendPage(
    c,
    { title: `Reporter setup: ${instanceId}`, current: "fleet", frame },
    <ReporterSetupPanel instanceId={instanceId} setup={setup} />,
  );
}
