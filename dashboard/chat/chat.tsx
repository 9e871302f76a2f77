/**
 * Chat: send the agent a message (an inbox event, priority 0) and read its replies. The thread
 * updates live, so a reply appears without a reload once the run that consumed the message ends.
 * Each message names the operator who sent it ("You (alice)" on alice's own), each reset divider
 * who reset; the form is only for a role that may chat, and keeps a refused message's text.
 */
import { epochOf, type ChatEntry, type ChatThreadData, type SessionStart } from "../../jobs/read-models/chat-thread.ts";
import { relative, utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";
import type { Viewer } from "../shell/can.ts";

function Outcome({ entry }: { entry: ChatEntry }) {
  switch (entry.state) {
    case "waiting":
      return <p class="muted">Waiting for the agent’s next run…</p>;
    case "working":
      return <p class="muted">{`The agent is answering (run #${entry.runId})…`}</p>;
    case "retrying":
      return <p class="muted">{`Run #${entry.runId} failed; the message will be handled by a retry.`}</p>;
    case "answered":
      if (!entry.showsReply) return <p class="muted">{`Answered together with a later message by run #${entry.runId}.`}</p>;
      return (
        <div class="reply" data-role="reply" data-testid={`reply-${entry.eventId}`}>
          <p class="visually-hidden">Agent’s reply:</p>
          {entry.reply ?? "(the run finished without a reply)"}
          <p class="muted">
            <a href={`/runs/${entry.runId}`}>{`run #${entry.runId}`}</a>
          </p>
        </div>
      );
  }
}

function SessionDivider({ session }: { session: SessionStart }) {
  return (
    <li class="session-divider" data-testid="session-divider" data-epoch={String(session.epoch)}>
      {`New session (epoch ${session.epoch}) started by a session reset${session.startedBy ? ` by ${session.startedBy}` : ""} at ${utcTime(session.startedAt)}. The agent no longer sees the messages above.`}
    </li>
  );
}

/** The sessions that start after `previous` up to and including `epoch`, each a divider. */
const startsBetween = (sessions: SessionStart[], previous: number, epoch: number) =>
  sessions.filter((s) => s.epoch > previous && s.epoch <= epoch);

export function ChatThread({ thread, now, viewer }: { thread: ChatThreadData; now: number; viewer: string }) {
  const { entries, sessions } = thread;
  const latest = sessions.at(-1)?.epoch ?? 1;
  if (entries.length === 0) return <p>No messages yet. Ask the agent something about the fleet.</p>;
  let previous = epochOf(entries[0]!, sessions);
  return (
    <ol class="cards" aria-label="Messages, oldest first">
      {entries.map((entry) => {
        const epoch = epochOf(entry, sessions);
        const dividers = startsBetween(sessions, previous, epoch);
        previous = Math.max(previous, epoch);
        return (
          <>
            {dividers.map((session) => (
              <SessionDivider session={session} />
            ))}
            <ChatItem entry={entry} now={now} viewer={viewer} />
          </>
        );
      })}
      {startsBetween(sessions, previous, latest).map((session) => (
        <SessionDivider session={session} />
      ))}
    </ol>
  );
}

/** Who sent it: the operator's name, "You (name)" on the viewer's own; older messages named no one. */
export function sender(operator: string | null, viewer: string): string {
  if (operator === null) return "An operator";
  return operator === viewer ? `You (${operator})` : operator;
}

function ChatItem({ entry, now, viewer }: { entry: ChatEntry; now: number; viewer: string }) {
  return (
    <li class="card chat-item" data-event-id={String(entry.eventId)}>
      <p
        class="muted"
        data-testid="sender"
      >{`${sender(entry.operator, viewer)}, ${utcTime(entry.sentAt)} (${relative(entry.sentAt, now)})`}</p>
      <p class="said" data-role="message">
        {entry.text}
      </p>
      <Outcome entry={entry} />
    </li>
  );
}

export function ChatPage(props: {
  thread: ChatThreadData;
  now: number;
  csrf: string;
  sessionEpoch: number;
  summary: string;
  error?: string | null;
  text: string;
  viewer: Viewer;
}) {
  return (
    <>
      <div data-live="chat">
        <ChatThread thread={props.thread} now={props.now} viewer={props.viewer.name} />
      </div>
      {/* A refused message is shown back in the form, whoever may send, so its text is never lost. */}
      {props.viewer.can("chat") || props.text ? (
        <ChatForm {...props} />
      ) : (
        <p class="muted">Sending the agent a message needs the operator role; you can read the thread.</p>
      )}
      <details>
        <summary>{`What the agent remembers of this session (epoch ${props.sessionEpoch})`}</summary>
        <p>{props.summary ? props.summary : "No summary yet: nothing in this session has been compacted."}</p>
      </details>
    </>
  );
}

function ChatForm(props: { csrf: string; error?: string | null; text: string }) {
  return (
    <form method="post" action="/chat" class="panel">
      <CsrfField token={props.csrf} />
      <input type="hidden" name="nonce" value={crypto.randomUUID()} />
      <div class="field">
        <label for="chat-text">Message to the agent</label>
        {props.error ? (
          <p class="error" id="chat-error">
            {props.error}
          </p>
        ) : null}
        <textarea id="chat-text" name="text" required maxlength={8000} aria-describedby={props.error ? "chat-error" : undefined}>
          {props.text}
        </textarea>
      </div>
      <button type="submit">Send</button>
    </form>
  );
}
